"""Synthetic NLI pairs beyond biographies (v3): passages about companies, towns, products,
buildings, species, medicines and events, with the kinds of pair that v2 misreads.

A passage states 1-5 facts of one subject (a sentence right after another about it may call it
"the company", "the town": `_render`) and, in most pairs, 1-4 true sentences about another subject of the same domain with its own
numbers, dates and names (the counter-shortcut: a number in the premise is not the claim's).
Kinds (`kind` field "dom:<kind>:<domain>"):
  support      a stated fact in other words (entailment), the premise holding other numbers
  bound        a numeric bound or a negation of a wrong value ("more than 40", "not in 1987"):
               entailment; the false bound / the negated true value: contradiction
  first        "No company had ... before X" -> "X was the first company to ..." (entailment)
  arithmetic   "founded in 1998 ... seven years later" -> "in 2005" (entailment; a wrong sum:
               contradiction)
  swap         one value swapped, half the time for the other subject's value that the premise
               also states (contradiction)
  negation     a stated fact denied (contradiction)
  antonym      a superlative or direction reversed ("largest" / "smallest", "rose" / "fell"):
               contradiction; the same wording: entailment
  off_topic    the same predicate, often the same value, said of another subject the premise
               never names (neutral)
  specific     a stated fact with a detail no sentence gives (neutral)
  absent       a fact of the subject that the premise does not state, half of them reusing one
               of the premise's numbers (neutral)

Every pair comes from its own seed (`example(seed)`), as in bios.py; data.py gives the training
and dev sets disjoint seed ranges. The stress suite (stress.jsonl) is written by hand and shares
no template with this file.
"""
import random

from bios import _faker

LABELS = {"contradiction": 0, "entailment": 1, "neutral": 2}
WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
REGIONS = ["the north of the country", "the southern region", "the coastal province", "the eastern highlands",
           "the western plains", "the river valley", "the central district", "the lake district"]
CITIES = ["Lyon", "Porto", "Graz", "Tampere", "Leeds", "Kobe", "Recife", "Cork", "Malmo", "Bilbao", "Krakow", "Utrecht",
          "Aarhus", "Turin", "Dresden", "Quebec City", "Adelaide", "Puebla", "Izmir", "Pune", "Busan", "Perth",
          "Halifax", "Seville", "Bergen", "Ghent", "Brno", "Geneva", "Oslo", "Nagoya"]
LANGS = ["Rust", "Python", "Java", "C++", "Go", "Haskell", "Kotlin", "TypeScript", "OCaml", "Swift"]
CONDITIONS = ["migraine", "asthma", "type 2 diabetes", "high blood pressure", "psoriasis", "malaria",
              "rheumatoid arthritis", "epilepsy", "glaucoma", "gout"]
HABITATS = ["rainforest canopy", "mountain streams", "coastal mangroves", "desert scrub", "alpine meadows",
            "coral reefs", "peat bogs", "savanna grassland"]
SPORTS = [("football", "club"), ("rowing", "crew"), ("chess", "player"), ("cycling", "team"), ("rugby", "side"),
          ("volleyball", "team"), ("marathon", "runner"), ("curling", "rink")]


def _person(fake):
    return f"{fake.first_name()} {fake.last_name()}"


def _year(rng, lo=1850, hi=2020):
    return rng.randint(lo, hi)


def _num(n, rng):
    return WORDS[n] if n < len(WORDS) and rng.random() < 0.5 else f"{n:,}"


class Fact:
    """One fact of a subject: `value` and how it is worded. Wordings are functions of
    (subject, reference, value, rng): `say` in a premise, `claim` in a hypothesis (other words),
    `deny` its negation; `kind` says how to swap it (year, count, city, name, word)."""

    def __init__(self, key, kind, value, say, claim, deny, specific=(), choices=None):
        self.key, self.kind, self.value = key, kind, value
        self.say, self.claim, self.deny, self.specific, self.choices = say, claim, deny, specific, choices


def _swap(f, rng, other=None):
    """Another value of fact f; half the time the other subject's value of the same fact."""
    if other is not None and other != f.value and rng.random() < 0.5:
        return other
    if f.kind == "year":
        return f.value + rng.choice([-1, 1]) * rng.randint(1, 15)
    if f.kind == "count":
        d = max(1, int(f.value * rng.uniform(0.15, 0.6)))
        return max(2, f.value + rng.choice([-1, 1]) * d) if f.value > 3 else f.value + rng.randint(1, 4)
    if f.kind == "name":
        first, rest = f.value.split(" ", 1)
        other = rng.choice([n for n in ("Hale", "Moreau", "Lindqvist", "Okafor", "Sato", "Brandt", "Costa", "Novak")
                            if n not in f.value])
        # "Reyes Labs" -> "Moreau Labs"; "Ana Reyes" -> "Ana Moreau"
        return f"{other} {rest}" if rest in ("Labs", "Software", "Devices", "Systems", "Pharma") else f"{first} {other}"
    pool = f.choices or CITIES
    return rng.choice([v for v in pool if v != f.value])


# ---- the domains: a subject, its reference words and its facts ---------------------------------

def company(rng, fake):
    name = f"{fake.last_name()} {rng.choice(['Systems', 'Labs', 'Foods', 'Motors', 'Pharma', 'Energy', 'Textiles', 'Logistics', 'Robotics', 'Media'])}"
    ref = rng.choice(["the company", "the firm"])
    founded, staff = _year(rng, 1890, 2015), rng.randint(12, 90000)
    return name, ref, "company", [
        Fact("founded", "year", founded,
             [lambda s, r, v: f"{s} was founded in {v}.", lambda s, r, v: f"{s} was established in {v}."],
             [lambda s, v: f"{s} was set up in {v}.", lambda s, v: f"{s} has existed since {v}.", lambda s, v: f"The founding of {s} took place in {v}."],
             lambda s, v: f"{s} was not founded in {v}.",
             [lambda s, v, rng, fake: f"{s} was founded in {v} by {_person(fake)}.",
              lambda s, v, rng, fake: f"{s} was founded in {v} in a garage."]),
        Fact("hq", "city", rng.choice(CITIES),
             [lambda s, r, v: f"{_cap(r)} is headquartered in {v}.", lambda s, r, v: f"{s} has its head office in {v}."],
             [lambda s, v: f"The headquarters of {s} are in {v}.", lambda s, v: f"{s} is based in {v}."],
             lambda s, v: f"{s} is not headquartered in {v}.",
             [lambda s, v, rng, fake: f"{s} is headquartered in a converted warehouse in {v}."]),
        Fact("staff", "count", staff,
             [lambda s, r, v: f"{_cap(r)} employs {v:,} people.", lambda s, r, v: f"{s} has a workforce of {v:,}."],
             [lambda s, v: f"{s} has {v:,} employees.", lambda s, v: f"{v:,} people work for {s}."],
             lambda s, v: f"{s} does not employ {v:,} people.",
             [lambda s, v, rng, fake: f"{s} employs {v:,} people, most of them engineers."]),
        Fact("ceo", "name", _person(fake),
             [lambda s, r, v: f"The chief executive of {r} is {v}.", lambda s, r, v: f"{v} serves as chief executive of {s}."],
             [lambda s, v: f"{v} is the CEO of {s}.", lambda s, v: f"{s} is run by {v}."],
             lambda s, v: f"{v} is not the chief executive of {s}.",
             [lambda s, v, rng, fake: f"{v} became CEO of {s} after a boardroom vote."]),
    ], {"rank": ("largest", "smallest", "employer in " + rng.choice(CITIES)),
        "trend": ("revenue", rng.randint(2001, 2023)),
        "first": ("company", rng.choice(["sell electric scooters", "offer same-day delivery", "make recycled denim",
                                          "ship a solar-powered router", "open a factory"]) + " in " + rng.choice(CITIES))}


def town(rng, fake):
    name = fake.city()
    ref = "the town"
    return name, ref, "town", [
        Fact("pop", "count", rng.randint(800, 400000),
             [lambda s, r, v: f"{s} has a population of {v:,}.", lambda s, r, v: f"About {v:,} people live in {s}."],
             [lambda s, v: f"{s} is home to about {v:,} people.", lambda s, v: f"The population of {s} is about {v:,}."],
             lambda s, v: f"{s} does not have a population of {v:,}.",
             [lambda s, v, rng, fake: f"{s} has a population of {v:,}, a third of them students."]),
        Fact("charter", "year", _year(rng, 1100, 1950),
             [lambda s, r, v: f"{s} received its town charter in {v}.", lambda s, r, v: f"{_cap(r)} was granted a charter in {v}."],
             [lambda s, v: f"{s} became a chartered town in {v}.", lambda s, v: f"The charter of {s} dates from {v}."],
             lambda s, v: f"{s} did not receive its charter in {v}.",
             [lambda s, v, rng, fake: f"{s} received its charter in {v} from the king."]),
        Fact("river", "word", rng.choice(["Alder", "Wren", "Seld", "Marrow", "Tove", "Kessel", "Orne", "Lune"]),
             [lambda s, r, v: f"{_cap(r)} lies on the River {v}.", lambda s, r, v: f"The River {v} flows through {s}."],
             [lambda s, v: f"{s} is on the River {v}.", lambda s, v: f"The {v} runs through {s}."],
             lambda s, v: f"{s} is not on the River {v}.",
             [lambda s, v, rng, fake: f"{s} lies on the River {v}, which floods every spring."],
             choices=["Alder", "Wren", "Seld", "Marrow", "Tove", "Kessel", "Orne", "Lune"]),
        Fact("mayor", "name", _person(fake),
             [lambda s, r, v: f"The current mayor of {s} is {v}.", lambda s, r, v: f"{v} is the mayor of {r}."],
             [lambda s, v: f"{v} is mayor of {s}.", lambda s, v: f"{s} is led by mayor {v}."],
             lambda s, v: f"{v} is not the mayor of {s}.",
             [lambda s, v, rng, fake: f"{v} was elected mayor of {s} unopposed."]),
        Fact("alt", "count", rng.randint(5, 2400),
             [lambda s, r, v: f"{_cap(r)} sits at an altitude of {v:,} metres.", lambda s, r, v: f"{s} lies {v:,} metres above sea level."],
             [lambda s, v: f"{s} is {v:,} metres above sea level.", lambda s, v: f"The altitude of {s} is {v:,} metres."],
             lambda s, v: f"{s} does not lie {v:,} metres above sea level.", []),
    ], {"rank": ("oldest", "newest", "town in " + rng.choice(REGIONS)),
        "trend": ("population", rng.randint(1990, 2023)),
        "first": ("town", rng.choice(["ban cars from its centre", "install gas street lighting", "elect a woman as mayor",
                                       "open a public library"]) + " in " + rng.choice(REGIONS))}


def product(rng, fake):
    name = f"{rng.choice(['Lumen', 'Quill', 'Atlas', 'Nimbus', 'Kestrel', 'Orbit', 'Tessera', 'Vesper', 'Cinder', 'Halcyon'])} {rng.randint(2, 9)}"
    thing = rng.choice(["text editor", "database", "web browser", "photo editor", "compiler", "game engine", "smartwatch", "e-reader"])
    ref = f"the {thing}"
    maker = f"{fake.last_name()} {rng.choice(['Labs', 'Software', 'Devices', 'Systems'])}"
    return f"{name}", ref, thing, [
        Fact("released", "year", _year(rng, 1985, 2024),
             [lambda s, r, v: f"{s} was released in {v}.", lambda s, r, v: f"{s} first shipped in {v}."],
             [lambda s, v: f"{s} came out in {v}.", lambda s, v: f"The release of {s} was in {v}."],
             lambda s, v: f"{s} was not released in {v}.",
             [lambda s, v, rng, fake: f"{s} was released in {v} after a delay of two years."]),
        Fact("maker", "name", maker,
             [lambda s, r, v: f"{_cap(r)} is developed by {v}.", lambda s, r, v: f"{v} makes {s}."],
             [lambda s, v: f"{s} is a product of {v}.", lambda s, v: f"{v} is the developer of {s}."],
             lambda s, v: f"{s} is not developed by {v}.",
             [lambda s, v, rng, fake: f"{s} is developed by {v} with public funding."]),
        Fact("lang", "word", rng.choice(LANGS),
             [lambda s, r, v: f"{_cap(r)} is written in {v}.", lambda s, r, v: f"The code of {s} is written in {v}."],
             [lambda s, v: f"{s} is implemented in {v}.", lambda s, v: f"{v} is the language {s} is written in."],
             lambda s, v: f"{s} is not written in {v}.",
             [lambda s, v, rng, fake: f"{s} is written in {v} and was rewritten once."], choices=LANGS),
        Fact("users", "count", rng.randint(2, 900) * 1000,
             [lambda s, r, v: f"{_cap(r)} has about {v:,} users.", lambda s, r, v: f"Some {v:,} people use {s}."],
             [lambda s, v: f"{s} is used by about {v:,} people.", lambda s, v: f"The user base of {s} is about {v:,}."],
             lambda s, v: f"{s} does not have {v:,} users.",
             [lambda s, v, rng, fake: f"{s} has about {v:,} users, mostly in Asia."]),
    ], {"rank": ("fastest", "slowest", thing + " in its class"),
        "trend": ("sales", rng.randint(2001, 2023)),
        "first": (thing, rng.choice(["support dark mode", "run entirely offline", "use a plug-in system",
                                      "sync through the cloud"]))}


def building(rng, fake):
    name = f"the {fake.last_name()} {rng.choice(['Tower', 'Bridge', 'Library', 'Cathedral', 'Stadium', 'Opera House', 'Observatory'])}"
    ref = rng.choice(["the structure", "the building"])
    return name, ref, "building", [
        Fact("completed", "year", _year(rng, 1600, 2022),
             [lambda s, r, v: f"{s[0].upper() + s[1:]} was completed in {v}.", lambda s, r, v: f"Work on {s} ended in {v}."],
             [lambda s, v: f"{s[0].upper() + s[1:]} was finished in {v}.", lambda s, v: f"Construction of {s} was completed in {v}."],
             lambda s, v: f"{s[0].upper() + s[1:]} was not completed in {v}.",
             [lambda s, v, rng, fake: f"{s[0].upper() + s[1:]} was completed in {v}, two years late."]),
        Fact("architect", "name", _person(fake),
             [lambda s, r, v: f"{_cap(r)} was designed by {v}.", lambda s, r, v: f"{v} designed {s}."],
             [lambda s, v: f"{v} was the architect of {s}.", lambda s, v: f"The design of {s} is by {v}."],
             lambda s, v: f"{s[0].upper() + s[1:]} was not designed by {v}.",
             [lambda s, v, rng, fake: f"{v} designed {s} while still a student."]),
        Fact("height", "count", rng.randint(12, 480),
             [lambda s, r, v: f"{_cap(r)} is {v} metres tall.", lambda s, r, v: f"{s[0].upper() + s[1:]} rises {v} metres."],
             [lambda s, v: f"{s[0].upper() + s[1:]} has a height of {v} metres.", lambda s, v: f"{s[0].upper() + s[1:]} stands {v} metres high."],
             lambda s, v: f"{s[0].upper() + s[1:]} is not {v} metres tall.", []),
        Fact("city", "city", rng.choice(CITIES),
             [lambda s, r, v: f"{s[0].upper() + s[1:]} stands in {v}.", lambda s, r, v: f"{_cap(r)} is located in {v}."],
             [lambda s, v: f"{s[0].upper() + s[1:]} is in {v}.", lambda s, v: f"{v} is where {s} stands."],
             lambda s, v: f"{s[0].upper() + s[1:]} is not in {v}.",
             [lambda s, v, rng, fake: f"{s[0].upper() + s[1:]} stands in the old port district of {v}."]),
    ], {"rank": ("tallest", "shortest", "structure in " + rng.choice(CITIES)),
        "trend": ("visitor numbers", rng.randint(2001, 2023)),
        "first": ("building", rng.choice(["use a steel frame", "have electric lifts", "be heated by geothermal water",
                                           "have a glass roof"]) + " in " + rng.choice(CITIES))}


def species(rng, fake):
    name = f"the {rng.choice(['spotted', 'crested', 'lesser', 'giant', 'pale', 'banded', 'golden', 'dwarf'])} {rng.choice(['shrew', 'heron', 'tree frog', 'gecko', 'bat', 'salamander', 'finch', 'moth', 'catfish'])}"
    ref = rng.choice(["the species", "the animal"])
    cap = lambda s: s[0].upper() + s[1:]  # noqa: E731
    return name, ref, "species", [
        Fact("described", "year", _year(rng, 1758, 2021),
             [lambda s, r, v: f"{cap(s)} was first described in {v}.", lambda s, r, v: f"{cap(r)} was described by science in {v}."],
             [lambda s, v: f"The first description of {s} dates from {v}.", lambda s, v: f"{cap(s)} has been known to science since {v}."],
             lambda s, v: f"{cap(s)} was not first described in {v}.",
             [lambda s, v, rng, fake: f"{cap(s)} was first described in {v} from a single specimen."]),
        Fact("length", "count", rng.randint(2, 180),
             [lambda s, r, v: f"Adults of {r} reach a length of {v} centimetres.", lambda s, r, v: f"{cap(s)} grows to {v} centimetres."],
             [lambda s, v: f"An adult of {s} is up to {v} centimetres long.", lambda s, v: f"{cap(s)} can reach {v} centimetres in length."],
             lambda s, v: f"{cap(s)} does not grow to {v} centimetres.", []),
        Fact("habitat", "word", rng.choice(HABITATS),
             [lambda s, r, v: f"{cap(r)} lives in {v}.", lambda s, r, v: f"{cap(s)} is found in {v}."],
             [lambda s, v: f"The habitat of {s} is {v}.", lambda s, v: f"{cap(s)} inhabits {v}."],
             lambda s, v: f"{cap(s)} does not live in {v}.",
             [lambda s, v, rng, fake: f"{cap(s)} lives in {v} at night only."], choices=HABITATS),
        Fact("discoverer", "name", _person(fake),
             [lambda s, r, v: f"{_cap(r)} was named by the zoologist {v}.", lambda s, r, v: f"{v} gave {s} its scientific name."],
             [lambda s, v: f"{cap(s)} was named by {v}.", lambda s, v: f"The scientific name of {s} comes from {v}."],
             lambda s, v: f"{cap(s)} was not named by {v}.", []),
    ], {"rank": ("largest", "smallest", "member of its family"),
        "trend": ("numbers", rng.randint(1990, 2023)),
        "first": ("animal", rng.choice(["be tracked by satellite", "be bred in captivity", "be filmed in the wild"]) + " in " + rng.choice(REGIONS))}


def medicine(rng, fake):
    name = rng.choice(["Velorin", "Tacramab", "Olvexa", "Prunazole", "Demitrel", "Astravir", "Colbenid", "Fenoquin", "Lirastan", "Moxitral"])
    ref = rng.choice(["the drug", "the medicine"])
    return name, ref, "drug", [
        Fact("approved", "year", _year(rng, 1950, 2024),
             [lambda s, r, v: f"{s} was approved for use in {v}.", lambda s, r, v: f"Regulators approved {s} in {v}."],
             [lambda s, v: f"{s} received approval in {v}.", lambda s, v: f"The approval of {s} came in {v}."],
             lambda s, v: f"{s} was not approved in {v}.",
             [lambda s, v, rng, fake: f"{s} was approved in {v} after a fast-track review."]),
        Fact("treats", "word", rng.choice(CONDITIONS),
             [lambda s, r, v: f"{_cap(r)} is used to treat {v}.", lambda s, r, v: f"{s} is prescribed for {v}."],
             [lambda s, v: f"{s} is a treatment for {v}.", lambda s, v: f"Doctors use {s} against {v}."],
             lambda s, v: f"{s} is not used to treat {v}.",
             [lambda s, v, rng, fake: f"{s} is used to treat {v} in children."], choices=CONDITIONS),
        Fact("halflife", "count", rng.randint(2, 96),
             [lambda s, r, v: f"The half-life of {r} in the body is {v} hours.", lambda s, r, v: f"{s} has a half-life of {v} hours."],
             [lambda s, v: f"The half-life of {s} is {v} hours.", lambda s, v: f"Half of a dose of {s} is cleared in {v} hours."],
             lambda s, v: f"{s} does not have a half-life of {v} hours.", []),
        Fact("maker", "name", f"{fake.last_name()} Pharma",
             [lambda s, r, v: f"{_cap(r)} was developed by {v}.", lambda s, r, v: f"{v} developed {s}."],
             [lambda s, v: f"{s} comes from {v}.", lambda s, v: f"{v} is the developer of {s}."],
             lambda s, v: f"{s} was not developed by {v}.",
             [lambda s, v, rng, fake: f"{v} developed {s} with a university partner."]),
    ], {"rank": ("most", "least", "prescribed drug of its class"),
        "trend": ("prescriptions", rng.randint(2001, 2023)),
        "first": ("drug", "be approved for " + rng.choice(CONDITIONS) + " in tablet form")}


def event(rng, fake):
    sport, who = rng.choice(SPORTS)
    year = _year(rng, 1900, 2023)
    name = f"the {year} {rng.choice(CITIES)} {sport} {rng.choice(['championship', 'cup', 'open', 'festival'])}"
    ref = rng.choice(["the event", "the tournament"])
    cap = lambda s: s[0].upper() + s[1:]  # noqa: E731
    return name, ref, "event", [
        Fact("winner", "name", _person(fake),
             [lambda s, r, v: f"{cap(s)} was won by {v}.", lambda s, r, v: f"{v} won {s}."],
             [lambda s, v: f"The winner of {s} was {v}.", lambda s, v: f"{v} took the title at {s}."],
             lambda s, v: f"{v} did not win {s}.",
             [lambda s, v, rng, fake: f"{v} won {s} on the final day."]),
        Fact("crowd", "count", rng.randint(300, 90000),
             [lambda s, r, v: f"{cap(r)} drew {v:,} spectators.", lambda s, r, v: f"Attendance at {s} was {v:,}."],
             [lambda s, v: f"{v:,} people attended {s}.", lambda s, v: f"{cap(s)} had an attendance of {v:,}."],
             lambda s, v: f"{cap(s)} did not draw {v:,} spectators.",
             [lambda s, v, rng, fake: f"{cap(s)} drew {v:,} spectators despite heavy rain."]),
        Fact("days", "count", rng.randint(2, 21),
             [lambda s, r, v: f"{cap(r)} lasted {WORDS[v] if v < len(WORDS) else v} days.", lambda s, r, v: f"{cap(s)} ran for {v} days."],
             [lambda s, v: f"{cap(s)} went on for {v} days.", lambda s, v: f"{cap(s)} lasted {v} days."],
             lambda s, v: f"{cap(s)} did not last {v} days.", []),
        Fact("venue", "word", rng.choice(["the national stadium", "the old arena", "the riverside park", "the sports hall",
                                          "the university grounds"]),
             [lambda s, r, v: f"{cap(r)} was held at {v}.", lambda s, r, v: f"{cap(s)} took place at {v}."],
             [lambda s, v: f"The venue of {s} was {v}.", lambda s, v: f"{cap(s)} was staged at {v}."],
             lambda s, v: f"{cap(s)} was not held at {v}.", [],
             choices=["the national stadium", "the old arena", "the riverside park", "the sports hall", "the university grounds"]),
    ], {"rank": ("largest", "smallest", f"{sport} event of the year"),
        "trend": ("attendance", year),
        "first": ("event", rng.choice(["be shown on television", "admit women competitors", "use video replays"]))}


DOMAINS = [company, town, product, building, species, medicine, event]

# kind -> weight (the share of v3's domain pairs)
KINDS = {"support": 20, "bound": 10, "first": 4, "arithmetic": 4, "swap": 12, "negation": 6, "antonym": 8,
         "off_topic": 14, "specific": 10, "absent": 12}


# Facts a subject can hold several values of (a town on two rivers, a drug for two conditions):
# another value is neutral, not a contradiction (as bios.COMPATIBLE), and its denial says nothing.
MULTI = {"river", "lang", "habitat", "treats"}


def _cap(s):
    return s[0].upper() + s[1:]


def _subject(rng, fake, domain, avoid):
    while True:
        s = domain(rng, fake)
        if s[0] != avoid:
            return s


def _render(entries, subj, distract, rng):
    """The premise: `entries` of the subject in order, `distract` (sentences naming another
    subject) placed before, after or between them. An entry is ("f", fact), ("r", fn of the
    reference) or ("t", text). A subject sentence names the subject unless the sentence before it
    is about the subject too; then it may say "the company" / "the town"."""
    name, ref = subj[0], subj[1]
    slots = [("s", e) for e in entries]
    for d in distract:
        slots.insert(rng.randint(0, len(slots)), ("d", d))
    out, prev = [], None
    for who, e in slots:
        if who == "d":
            out.append(e)
        else:
            r = ref if prev == "s" and rng.random() < 0.6 else name
            tag, x = e
            out.append(_cap(rng.choice(x.say)(name, r, x.value) if tag == "f" else x(r) if tag == "r" else x))
        prev = who
    return " ".join(out)


def example(seed):
    """One pair from its own seed: {premise, hypothesis, label, kind, seed}."""
    rng = random.Random(seed)
    fake = _faker()
    fake.seed_instance(seed)
    domain = rng.choice(DOMAINS)
    subj = domain(rng, fake)
    other = _subject(rng, fake, domain, subj[0])
    kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    premise, hyp, label = _pair(kind, subj, other, rng, fake)
    return {"premise": premise, "hypothesis": _cap(hyp), "label": LABELS[label], "kind": f"dom:{kind}:{subj[2]}",
            "seed": seed, "subject": subj[0], "other": other[0]}


def _pair(kind, subj, other, rng, fake):
    name, ref, noun, facts, extras = subj
    oname, ofacts = other[0], other[3]
    facts = list(facts)
    rng.shuffle(facts)
    n = rng.randint(1, len(facts))
    stated, unstated = facts[:n], facts[n:]
    entries = [("f", g) for g in stated]
    # distractors: true sentences about the other subject, always named (not for off_topic, whose
    # premise must not name the claim's subject)
    odist = [] if kind == "off_topic" else rng.sample(ofacts, min(rng.choice([0, 1, 1, 2, 2, 3, 4]), len(ofacts)))
    distract = [_cap(rng.choice(o.say)(oname, oname, o.value)) for o in odist]
    f = rng.choice(stated)
    ovalue = next((o.value for o in odist if o.key == f.key), None)

    def premise():
        return _render(entries, subj, distract, rng)

    if kind == "support":
        claims = [rng.choice(g.claim)(name, g.value) for g in rng.sample(stated, min(len(stated), rng.choice([1, 1, 2])))]
        return premise(), " ".join(_cap(c) for c in claims), "entailment"
    if kind == "swap":
        v = _swap(f, rng, ovalue)
        return premise(), rng.choice(f.claim)(name, v), "neutral" if f.key in MULTI else "contradiction"
    if kind == "negation":
        if rng.random() < 0.5:
            return premise(), f.deny(name, f.value), "contradiction"
        # the premise denies the value; the claim states it
        entries[stated.index(f)] = ("t", f.deny(name, f.value))
        return premise(), rng.choice(f.claim)(name, f.value), "contradiction"
    if kind == "bound":
        if f.kind in ("year", "count"):
            return (premise(), *_bound(name, f, rng))
        if f.key in MULTI:
            return _pair("support", subj, other, rng, fake)
        # the denial of a wrong value of a single-valued fact is true
        if rng.random() < 0.75:
            return premise(), f.deny(name, _swap(f, rng, ovalue)), "entailment"
        return premise(), f.deny(name, f.value), "contradiction"
    if kind == "specific":
        spec = [g for g in stated if g.specific]
        if not spec:
            return _pair("absent", subj, other, rng, fake)
        g = rng.choice(spec)
        return premise(), rng.choice(g.specific)(name, g.value, rng, fake), "neutral"
    if kind == "absent":
        if not unstated:
            if len(stated) == 1:
                return _pair("specific", subj, other, rng, fake)
            stated, unstated = stated[:-1], stated[-1:]
            entries = entries[:-1]
        g = rng.choice(unstated)
        v = g.value
        # half the time the claim reuses a number the premise states (of another fact or subject)
        nums = [h.value for h in stated + odist if h.kind == g.kind and h.kind in ("year", "count")]
        if nums and rng.random() < 0.5:
            v = rng.choice(nums)
        return premise(), rng.choice(g.claim)(name, v), "neutral"
    if kind == "off_topic":
        # the other subject with the same predicate: the subject's value, or its own
        v = rng.choice([f.value, f.value, next(o.value for o in ofacts if o.key == f.key)])
        if _unit(f) and rng.random() < 0.3:
            return premise(), f"{_cap(oname)} has more than {max(1, f.value - 1):,} {_unit(f)}.", "neutral"
        return premise(), rng.choice(f.claim)(oname, v), "neutral"
    if kind == "antonym":
        hi, lo, scope = extras["rank"]
        what, year = extras["trend"]
        if rng.random() < 0.5:
            word, anti = (hi, lo) if rng.random() < 0.5 else (lo, hi)
            said = ("t", f"{_cap(name)} is the {word} {scope}.")
            same, rev = f"{_cap(name)} is the {word} {scope}.", f"{_cap(name)} is the {anti} {scope}."
        else:
            verb, averb = ("rose", "fell") if rng.random() < 0.5 else ("fell", "rose")
            said = ("r", lambda r: f"In {year}, the {what} of {r} {verb} sharply.")
            same, rev = f"The {what} of {name} {verb} in {year}.", f"The {what} of {name} {averb} in {year}."
        entries.insert(rng.randint(0, len(entries)), said)
        if rng.random() < 0.6:
            return premise(), rev, "contradiction"
        return premise(), same, "entailment"
    if kind == "first":
        kind_noun, deed = extras["first"]
        said = rng.choice([f"No {kind_noun} had managed to {deed} before {name}.",
                           f"Before {name}, no other {kind_noun} had been able to {deed}."])
        entries.insert(rng.randint(0, len(entries)), ("t", said))
        if rng.random() < 0.75:
            return premise(), f"{name} was the first {kind_noun} to {deed}.", "entailment"
        return premise(), f"{name} was not the first {kind_noun} to {deed}.", "contradiction"
    # arithmetic: a year stated as an offset from another year
    years = [g for g in stated if g.kind == "year"]
    if not years:
        return _pair("support", subj, other, rng, fake)
    g = years[0]
    k = rng.randint(2, 12)
    event_s = rng.choice(["moved to a new site", "was renovated", "won its first national award", "changed its name"])
    entries.insert(stated.index(g) + 1, ("r", lambda r: f"{r} {event_s} {WORDS[k] if k < len(WORDS) else k} years later."))
    if rng.random() < 0.7:
        return premise(), f"{name} {event_s} in {g.value + k}.", "entailment"
    return premise(), f"{name} {event_s} in {g.value + k + rng.choice([-3, -2, -1, 1, 2, 3])}.", "contradiction"


def _unit(f):
    return {"staff": "employees", "pop": "inhabitants", "users": "users", "crowd": "spectators"}.get(f.key)


def _bound(name, f, rng):
    """A bound on a year or count: true (entailment) or false (contradiction)."""
    v = f.value
    d = rng.randint(1, 10) if f.kind == "year" else max(1, int(v * rng.uniform(0.1, 0.5)))
    true = rng.random() < 0.6
    if f.kind == "year":
        what = {"founded": "was founded", "charter": "received its charter", "released": "was released",
                "completed": "was completed", "described": "was first described", "approved": "was approved"}.get(f.key)
        if what is None:
            return rng.choice(f.claim)(name, v), "entailment"
        if rng.random() < 0.5:
            return (f"{_cap(name)} {what} after {v - d}.", "entailment") if true else (f"{_cap(name)} {what} after {v + d}.", "contradiction")
        return (f"{_cap(name)} {what} before {v + d}.", "entailment") if true else (f"{_cap(name)} {what} before {v - d}.", "contradiction")
    unit = _unit(f)
    if unit is None:
        return f.deny(name, v + d), "entailment"
    if rng.random() < 0.5:
        return (f"{_cap(name)} has more than {v - d:,} {unit}.", "entailment") if true else (f"{_cap(name)} has more than {v + d:,} {unit}.", "contradiction")
    return (f"{_cap(name)} has fewer than {v + d:,} {unit}.", "entailment") if true else (f"{_cap(name)} has fewer than {v - d:,} {unit}.", "contradiction")




if __name__ == "__main__":
    import collections
    import json
    import sys
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rows = [example(3_500_000 + i) for i in range(n)]
    for r in rows[:n if n <= 40 else 40]:
        print(json.dumps(r))
    print(collections.Counter(r["kind"].split(":")[1] + ":" + str(r["label"]) for r in rows))
