// ESM entry: `import * as uqlite from 'uqlite'` (or `import uqlite from 'uqlite'`); the
// implementation is the CommonJS index.js.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const uqlite = require('./index.js');

export const { version, load, getLoadablePath, daemonPath, scoreRows, scoreTable, highlight } = uqlite;
export default uqlite;
