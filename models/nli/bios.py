"""Synthetic biography NLI pairs: a Wikipedia-style biography (the premise) and a claim of 1-3
facts (the hypothesis) that is stated (entailment), value-swapped (contradiction) or more
specific than the premise / absent from it (neutral). Names come from `faker`.

Every example is generated from its own seed (`example(seed, ...)`), so the training set and
the dev set are disjoint by construction: they draw from disjoint seed ranges (data.py).

Kinds (the `kind` field says which one made a pair):
  v2: entail, swap:<attr> (swap:date: a lead sentence's full date), more_specific:<attr>,
      absent:<attr>; other:<attr> (v3's share of v2's kinds: another value of a COMPATIBLE fact)
  v3 adds: negation, ordinal, cardinal, temporal, antonym, far (the conflicting or supporting
  fact placed at the end of a long premise), paraphrase, hard_negative (a premise about another
  person sharing the claim's words).
"""
import random

from faker import Faker

LABELS = {"contradiction": 0, "entailment": 1, "neutral": 2}

COUNTRIES = [  # country, nationality, cities
    ("France", "French", ["Paris", "Lyon", "Marseille", "Toulouse", "Bordeaux"]),
    ("Germany", "German", ["Berlin", "Munich", "Hamburg", "Cologne", "Leipzig"]),
    ("Italy", "Italian", ["Rome", "Milan", "Naples", "Turin", "Florence"]),
    ("Spain", "Spanish", ["Madrid", "Barcelona", "Seville", "Valencia", "Bilbao"]),
    ("England", "English", ["London", "Manchester", "Liverpool", "Bristol", "Leeds"]),
    ("Scotland", "Scottish", ["Glasgow", "Edinburgh", "Aberdeen", "Dundee"]),
    ("Ireland", "Irish", ["Dublin", "Cork", "Galway", "Limerick"]),
    ("the United States", "American", ["New York City", "Chicago", "Boston", "Los Angeles", "Houston", "Seattle"]),
    ("Canada", "Canadian", ["Toronto", "Montreal", "Vancouver", "Ottawa", "Calgary"]),
    ("Australia", "Australian", ["Sydney", "Melbourne", "Brisbane", "Perth", "Adelaide"]),
    ("Brazil", "Brazilian", ["Rio de Janeiro", "Sao Paulo", "Salvador", "Recife"]),
    ("Mexico", "Mexican", ["Mexico City", "Guadalajara", "Monterrey", "Puebla"]),
    ("Japan", "Japanese", ["Tokyo", "Osaka", "Kyoto", "Nagoya", "Sapporo"]),
    ("India", "Indian", ["Mumbai", "Delhi", "Chennai", "Kolkata", "Bangalore"]),
    ("Sweden", "Swedish", ["Stockholm", "Gothenburg", "Malmo", "Uppsala"]),
    ("Poland", "Polish", ["Warsaw", "Krakow", "Gdansk", "Wroclaw"]),
    ("the Netherlands", "Dutch", ["Amsterdam", "Rotterdam", "Utrecht", "The Hague"]),
    ("Argentina", "Argentine", ["Buenos Aires", "Cordoba", "Rosario", "Mendoza"]),
    ("Nigeria", "Nigerian", ["Lagos", "Abuja", "Ibadan", "Kano"]),
    ("Greece", "Greek", ["Athens", "Thessaloniki", "Patras", "Heraklion"]),
]
PROFESSIONS = [  # profession, field of work, what they make, award pool
    ("novelist", "literature", "novels", ["the Booker Prize", "the Pulitzer Prize for Fiction", "the Prix Goncourt", "the Costa Book Award"]),
    ("poet", "literature", "poetry collections", ["the T. S. Eliot Prize", "the Forward Prize", "the Griffin Poetry Prize"]),
    ("painter", "art", "paintings", ["the Turner Prize", "the Praemium Imperiale", "the Hugo Boss Prize"]),
    ("composer", "music", "symphonies", ["the Grawemeyer Award", "the Pulitzer Prize for Music", "the Polar Music Prize"]),
    ("singer", "music", "studio albums", ["a Grammy Award", "a Brit Award", "the Mercury Prize", "a Juno Award"]),
    ("actor", "film", "feature films", ["an Academy Award", "a Golden Globe Award", "a BAFTA Award", "a Screen Actors Guild Award"]),
    ("film director", "film", "feature films", ["the Palme d'Or", "the Golden Lion", "the Golden Bear", "an Academy Award"]),
    ("physicist", "physics", "research papers", ["the Nobel Prize in Physics", "the Wolf Prize in Physics", "the Dirac Medal", "the Max Planck Medal"]),
    ("chemist", "chemistry", "research papers", ["the Nobel Prize in Chemistry", "the Wolf Prize in Chemistry", "the Priestley Medal"]),
    ("mathematician", "mathematics", "research papers", ["the Fields Medal", "the Abel Prize", "the Wolf Prize in Mathematics", "the Shaw Prize"]),
    ("architect", "architecture", "buildings", ["the Pritzker Prize", "the RIBA Gold Medal", "the AIA Gold Medal"]),
    ("journalist", "journalism", "books", ["the Pulitzer Prize for Reporting", "the Orwell Prize", "the George Polk Award"]),
    ("footballer", "football", "league goals", ["the Ballon d'Or", "the Golden Boot", "the Golden Ball"]),
    ("tennis player", "tennis", "singles titles", ["the Laureus World Sports Award", "the ATP Newcomer of the Year award"]),
    ("politician", "politics", "bills", ["the Presidential Medal of Freedom", "the Order of Merit", "the Legion of Honour"]),
    ("economist", "economics", "books", ["the Nobel Memorial Prize in Economic Sciences", "the John Bates Clark Medal"]),
]
UNIVERSITIES = ["Harvard University", "the University of Oxford", "the University of Cambridge", "Yale University",
                "Stanford University", "Princeton University", "the Sorbonne", "the University of Tokyo",
                "Columbia University", "the University of Chicago", "McGill University", "the University of Melbourne",
                "Heidelberg University", "the University of Bologna", "Trinity College Dublin", "ETH Zurich",
                "the University of Edinburgh", "the University of Toronto", "Uppsala University", "Leiden University"]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh"]
NUMBER_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
# (fact about the person, its antonym): v3's antonym contradictions
ANTONYMS = [("won the election", "lost the election"), ("was promoted", "was demoted"),
            ("supported the reform", "opposed the reform"), ("was an only child", "had several siblings"),
            ("was the eldest child", "was the youngest child"), ("retired early", "retired late"),
            ("was acquitted", "was convicted"), ("entered the competition as the favourite", "entered the competition as an outsider"),
            ("accepted the offer", "rejected the offer"), ("was married", "was single"),
            ("joined the party", "left the party"), ("succeeded in the attempt", "failed in the attempt")]


def an(word):
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def num(n, rng):
    """A count as a word (small) or a figure."""
    return NUMBER_WORDS[n] if n < len(NUMBER_WORDS) and rng.random() < 0.6 else str(n)


class Person:
    def __init__(self, fake, rng):
        self.gender = rng.choice(["m", "f"])
        self.first = fake.first_name_male() if self.gender == "m" else fake.first_name_female()
        self.last = fake.last_name()
        self.name = f"{self.first} {self.last}"
        self.he, self.his = ("he", "his") if self.gender == "m" else ("she", "her")
        self.country, self.nat, cities = rng.choice(COUNTRIES)
        self.city = rng.choice(cities)
        self.prof, self.field, self.works, awards = rng.choice(PROFESSIONS)
        self.born = rng.randint(1900, 1980)
        self.died = self.born + rng.randint(45, 95) if rng.random() < 0.4 else None
        if self.died and self.died > 2023:
            self.died = None
        # full dates (day, month) of birth and death, written in a style of the premise's and one
        # of the claim's (they may differ: "8 August 1979" / "August 8, 1979")
        self.bday, self.bmonth = rng.randint(1, 28), rng.randrange(12)
        self.dday, self.dmonth = rng.randint(1, 28), rng.randrange(12)
        self.style, self.cstyle = rng.choice(["dmy", "mdy"]), rng.choice(["dmy", "mdy"])
        self.uni = rng.choice(UNIVERSITIES)
        self.grad = self.born + rng.randint(21, 26)
        self.award = rng.choice(awards)
        self.award_pool = awards
        self.award_year = min(self.grad + rng.randint(5, 30), 2022)
        self.spouse = (fake.first_name_female() if self.gender == "m" else fake.first_name_male()) + " " + fake.last_name()
        self.married = self.grad + rng.randint(0, 12)
        self.children = rng.randint(2, 7)
        self.nworks = rng.randint(3, 40)
        self.debut = self.grad + rng.randint(0, 6)
        self.move_city = rng.choice([c for _, _, cs in COUNTRIES for c in cs if c != self.city])
        self.move_year = self.grad + rng.choice([-1, 1]) * rng.randint(1, 8)
        self.siblings = rng.randint(2, 6)
        self.birth_order = rng.randint(1, self.siblings)
        self.antonym = rng.choice(ANTONYMS)


# Each attribute: premise wordings, claim wordings (other words for the same fact), and how to
# swap its value. A wording is a function of the person (p) and the rng.
def _year_swap(y, rng):
    return y + rng.choice([-1, 1]) * rng.randint(1, 12)


def _other(values, cur, rng):
    return rng.choice([v for v in values if v != cur])


ALL_CITIES = [c for _, _, cs in COUNTRIES for c in cs]
NATIONALITIES = [nat for _, nat, _ in COUNTRIES]
PROFESSION_NAMES = [prof for prof, _, _, _ in PROFESSIONS]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def date(p, which, style):
    """The person's full date of birth ('b') or death ('d')."""
    day, month, year = (p.bday, p.bmonth, p.born) if which == "b" else (p.dday, p.dmonth, p.died)
    return f"{day} {MONTHS[month]} {year}" if style == "dmy" else f"{MONTHS[month]} {day}, {year}"


def _lead(p, style):
    """A Wikipedia lead sentence: name, dates, nationality, profession."""
    if p.died:
        return f"{p.name} ({date(p, 'b', style)} – {date(p, 'd', style)}) was {an(p.nat)} {p.prof}."
    return f"{p.name} (born {date(p, 'b', style)}) is {an(p.nat)} {p.prof}."


def _lead_claim(p):
    """A claim of the date of birth or death alone (the one a swap changed)."""
    if p.died and getattr(p, "swapped", "d") == "d":
        return f"{p.name} died on {date(p, 'd', p.cstyle)}."
    if p.died:
        return f"{p.name} was born on {date(p, 'b', p.cstyle)}."
    return f"{p.name}, born {date(p, 'b', p.cstyle)}, is {an(p.nat)} {p.prof}."


def _date_swap(p, rng):
    """Another date of birth (or of death): the year, the month or the day."""
    which = "d" if p.died and rng.random() < 0.3 else "b"
    p.swapped = which
    r = rng.random()
    if r < 0.5:
        setattr(p, "died" if which == "d" else "born", _year_swap(p.died if which == "d" else p.born, rng))
    elif r < 0.75:
        attr = "dmonth" if which == "d" else "bmonth"
        setattr(p, attr, _other(range(12), getattr(p, attr), rng))
    else:
        attr = "dday" if which == "d" else "bday"
        setattr(p, attr, _other(range(1, 29), getattr(p, attr), rng))

ATTRS = {
    # the lead sentence of WikiBio-style text, with full dates: the sentence whose dates
    # sampled answers disagree on most often
    "lead": dict(
        premise=[lambda p: _lead(p, p.style)],
        claim=[lambda p: _lead(p, p.cstyle), _lead_claim],
        swap=_date_swap, kind="date"),
    "born": dict(
        premise=[lambda p: f"{p.name} was born in {p.born} in {p.city}, {p.country}.",
                 lambda p: f"Born in {p.city} in {p.born}, {p.name} grew up in {p.country}.",
                 lambda p: f"{p.name} ({p.born}–{p.died}) was {an(p.nat)} {p.prof}." if p.died else f"{p.name} (born {p.born}) is {an(p.nat)} {p.prof}."],
        claim=[lambda p: f"{p.name} was born in {p.born}.", lambda p: f"{p.name}'s year of birth is {p.born}.",
               lambda p: f"{p.first} {p.last} was born in the year {p.born}."],
        swap=lambda p, rng: setattr(p, "born", _year_swap(p.born, rng)), kind="year"),
    "city": dict(
        premise=[lambda p: f"{p.name} was born in {p.city}, {p.country}.",
                 lambda p: f"A native of {p.city}, {p.name} spent {p.his} childhood there."],
        claim=[lambda p: f"{p.name} was born in {p.city}.", lambda p: f"{p.name} is from {p.city}.",
               lambda p: f"{p.name}'s birthplace is {p.city}."],
        swap=lambda p, rng: setattr(p, "city", _other(ALL_CITIES, p.city, rng)), kind="city"),
    "nat": dict(
        premise=[lambda p: f"{p.name} is {an(p.nat)} {p.prof}.", lambda p: f"{p.name} is {an(p.prof)} from {p.country}."],
        claim=[lambda p: f"{p.name} is {p.nat}.", lambda p: f"{p.name} is {an(p.nat)} {p.prof}.",
               lambda p: f"{p.name} holds {p.nat} citizenship."],
        swap=lambda p, rng: (lambda c: (setattr(p, "nat", c[1]), setattr(p, "country", c[0])))(
            rng.choice([c for c in COUNTRIES if c[1] != p.nat])), kind="nationality"),
    "prof": dict(
        premise=[lambda p: f"{p.name} worked as {an(p.prof)} for most of {p.his} life.",
                 lambda p: f"{p.name} is best known as {an(p.prof)}."],
        claim=[lambda p: f"{p.name} is {an(p.prof)}.", lambda p: f"{p.name} worked as {an(p.prof)}."],
        swap=lambda p, rng: setattr(p, "prof", _other(PROFESSION_NAMES, p.prof, rng)), kind="profession"),
    "uni": dict(
        premise=[lambda p: f"{p.he.capitalize()} studied at {p.uni}, graduating in {p.grad}.",
                 lambda p: f"{p.name} graduated from {p.uni} in {p.grad}."],
        claim=[lambda p: f"{p.name} studied at {p.uni}.", lambda p: f"{p.name} is a graduate of {p.uni}.",
               lambda p: f"{p.name} attended {p.uni}."],
        swap=lambda p, rng: setattr(p, "uni", _other(UNIVERSITIES, p.uni, rng)), kind="university"),
    "award": dict(
        premise=[lambda p: f"In {p.award_year}, {p.name} received {p.award}.",
                 lambda p: f"{p.name} won {p.award} in {p.award_year}."],
        claim=[lambda p: f"{p.name} won {p.award}.", lambda p: f"{p.name} received {p.award} in {p.award_year}.",
               lambda p: f"{p.name} was awarded {p.award}."],
        swap=lambda p, rng: setattr(p, "award", _other(p.award_pool, p.award, rng)) if len(p.award_pool) > 1
        else setattr(p, "award_year", _year_swap(p.award_year, rng)), kind="award"),
    "award_year": dict(
        premise=[lambda p: f"In {p.award_year}, {p.name} received {p.award}."],
        claim=[lambda p: f"{p.name} received {p.award} in {p.award_year}.",
               lambda p: f"{p.name} won {p.award} in {p.award_year}."],
        swap=lambda p, rng: setattr(p, "award_year", _year_swap(p.award_year, rng)), kind="year"),
    "spouse": dict(
        premise=[lambda p: f"In {p.married}, {p.name} married {p.spouse}.",
                 lambda p: f"{p.name} has been married to {p.spouse} since {p.married}."],
        claim=[lambda p: f"{p.name} married {p.spouse}.", lambda p: f"{p.name}'s spouse is {p.spouse}.",
               lambda p: f"{p.name} is married to {p.spouse}."],
        swap=lambda p, rng: setattr(p, "spouse", _other_name(p, rng)), kind="spouse"),
    "children": dict(
        premise=[lambda p: f"{p.name} and {p.spouse} have {NUMBER_WORDS[p.children]} children.",
                 lambda p: f"{p.he.capitalize()} is the parent of {NUMBER_WORDS[p.children]} children."],
        claim=[lambda p: f"{p.name} has {NUMBER_WORDS[p.children]} children.",
               lambda p: f"{p.name} has {p.children} children."],
        swap=lambda p, rng: setattr(p, "children", _other(range(2, 10), p.children, rng)), kind="count"),
    "works": dict(
        premise=[lambda p: f"Over {p.his} career {p.name} produced {p.nworks} {p.works}.",
                 lambda p: f"{p.name} is credited with {p.nworks} {p.works}."],
        claim=[lambda p: f"{p.name} produced {p.nworks} {p.works}.", lambda p: f"{p.name} has {p.nworks} {p.works} to {p.his} name."],
        swap=lambda p, rng: setattr(p, "nworks", p.nworks + rng.choice([-1, 1]) * rng.randint(1, max(2, p.nworks // 2))), kind="count"),
    "died": dict(
        premise=[lambda p: f"{p.name} died in {p.city} in {p.died}." if p.died else f"{p.name} lives in {p.city}."],
        claim=[lambda p: f"{p.name} died in {p.died}." if p.died else f"{p.name} is alive."],
        swap=lambda p, rng: setattr(p, "died", _year_swap(p.died, rng)) if p.died else None, kind="year"),
    "debut": dict(
        premise=[lambda p: f"{p.his.capitalize()} career in {p.field} began in {p.debut}.",
                 lambda p: f"{p.name} made {p.his} debut in {p.field} in {p.debut}."],
        claim=[lambda p: f"{p.name} began {p.his} career in {p.debut}.", lambda p: f"{p.name} debuted in {p.debut}."],
        swap=lambda p, rng: setattr(p, "debut", _year_swap(p.debut, rng)), kind="year"),
}
# "More specific" claims (neutral): the attribute's fact as the premise states it, plus a detail
# no premise wording states (a day of birth, a spouse's job, the subject of a degree, ...). This
# is what most unsupported WikiBio sentences are against a sampled answer: the same kind of fact,
# told with details the sample does not give. A wording may return None (the detail does not
# apply to this person).
SPECIFIC = {
    "lead": [lambda p, r, f: _lead(p, p.cstyle)[:-1] + f" and {_other(PROFESSION_NAMES, p.prof, r)}.",
             lambda p, r, f: _lead(p, p.cstyle)[:-1] + f" based in {p.move_city}."],
    "born": [lambda p, r, f: f"{p.name} was born on {r.randint(1, 28)} {r.choice(MONTHS)} {p.born}.",
             lambda p, r, f: f"{p.name} was born in {p.born}, the {'son' if p.gender == 'm' else 'daughter'} of {an(f.job().lower())}."],
    "city": [lambda p, r, f: f"{p.name} was born in {p.city}, where {p.his} father worked as {an(f.job().lower())}.",
             lambda p, r, f: f"{p.name} was born in a suburb of {p.city}."],
    "nat": [lambda p, r, f: f"{p.name} is {an(p.nat)} {p.prof} of {_other(NATIONALITIES, p.nat, r)} descent.",
            lambda p, r, f: f"{p.name} holds both {p.nat} and {_other(NATIONALITIES, p.nat, r)} citizenship."],
    "prof": [lambda p, r, f: f"{p.name} worked as {an(p.prof)} for {r.randint(5, 40)} years at {f.company()}.",
             lambda p, r, f: f"{p.name} is {an(p.prof)} who specialises in {r.choice(['early', 'late', 'modern', 'regional', 'experimental'])} {p.field}."],
    "uni": [lambda p, r, f: f"{p.name} graduated from {p.uni} with honours.",
            lambda p, r, f: f"{p.name} studied at {p.uni} on a scholarship.",
            lambda p, r, f: f"{p.name} studied {r.choice(['law', 'history', 'medicine', 'philosophy', 'engineering'])} at {p.uni}."],
    "award": [lambda p, r, f: f"{p.name} received {p.award} at a ceremony in {r.choice(ALL_CITIES)}.",
              lambda p, r, f: f"{p.name} shared {p.award} with {f.name()}."],
    "spouse": [lambda p, r, f: f"{p.name} married {p.spouse}, {an(f.job().lower())}.",
               lambda p, r, f: f"{p.name} married {p.spouse} in {r.choice(ALL_CITIES)}."],
    "children": [lambda p, r, f: f"{p.name} has {NUMBER_WORDS[p.children]} children, {NUMBER_WORDS[r.randint(1, p.children - 1)]} of them daughters.",
                 lambda p, r, f: f"{p.name}'s eldest child became {an(f.job().lower())}."],
    "works": [lambda p, r, f: f"{p.name} produced {p.nworks} {p.works}, most of them while living in {p.move_city}.",
              lambda p, r, f: f"{p.name} produced {p.nworks} {p.works}, {r.randint(1, max(1, p.nworks // 3))} of them with {f.name()}."],
    "died": [lambda p, r, f: f"{p.name} died in {p.died} after a long illness." if p.died else None,
             lambda p, r, f: f"{p.name} died in {p.died} at {p.his} home in {p.move_city}." if p.died else None],
    "debut": [lambda p, r, f: f"{p.name} made {p.his} debut in {p.field} in {p.debut} in {p.move_city}.",
              lambda p, r, f: f"{p.name} began {p.his} career in {p.debut} under the guidance of {f.name()}."],
}
# What a premise sentence of an attribute may also state (so a claim of these is not "absent").
COVERS = {"lead": {"born", "nat", "prof"}, "born": {"city", "nat", "prof"}, "nat": {"prof"}, "prof": {"nat"}, "children": {"spouse"},
          "award": {"award_year"}, "works": {"prof"}}
# Facts a premise may omit and a neutral claim may state (the "absent" kind).
EXTRA = [lambda p, f: f"{p.name} speaks {f.random_int(2, 5)} languages.",
         lambda p, f: f"{p.name} was knighted in {p.award_year + 3}.",
         lambda p, f: f"{p.name} lived in {p.move_city} for a decade.",
         lambda p, f: f"{p.name}'s father was a {f.job().lower()}.",
         lambda p, f: f"{p.name} served in the army.",
         lambda p, f: f"{p.name} was a member of the {p.nat} Academy of Sciences.",
         lambda p, f: f"{p.name} taught at {p.uni}.",
         lambda p, f: f"{p.name} wrote an autobiography."]


def _other_name(p, rng):
    first, last = p.spouse.split(" ", 1)
    return first + " " + rng.choice([n for n in ("Smith", "Garcia", "Rossi", "Muller", "Tanaka", "Novak", "Silva",
                                                 "Dubois", "Kowalski", "Jensen", "Okafor", "Walsh") if n != last])


def filler(fake, rng, other):
    """A sentence unrelated to the person: about a place, or about another person."""
    r = rng.random()
    if r < 0.35:
        k = rng.choice(list(ATTRS))
        return rng.choice(ATTRS[k]["premise"])(other)
    c = rng.choice(ALL_CITIES)
    return rng.choice([
        f"{c} has a population of about {rng.randint(2, 90) * 10000:,} people.",
        f"The {rng.choice(['old', 'white', 'red', 'grey', 'new'])} town hall in {c} was completed in {rng.randint(1850, 2010)}.",
        f"{fake.company()} was founded in {c} in {rng.randint(1900, 2015)}.",
        f"The river that runs through {c} floods almost every spring.",
        f"The {rng.choice(['film', 'jazz', 'book', 'food', 'flower', 'lantern'])} festival is held in {c} every {rng.choice(['summer', 'winter', 'autumn', 'spring'])}.",
        f"{c} is known for its {rng.choice(['museums', 'harbour', 'markets', 'old town', 'university', 'cathedral'])}.",
    ])


def _premise_attrs(rng, long):
    keys = [k for k in ATTRS if k not in ("award_year", "lead")]
    n = rng.randint(3, 7) if long else rng.randint(1, 3)
    attrs = rng.sample(keys, min(n, len(keys)))
    # half the biographies open with a lead sentence, as Wikipedia's (and WikiBio's answers) do
    return ["lead"] + attrs[:-1] if rng.random() < 0.5 else attrs


def _sent(p, k, rng):
    return rng.choice(ATTRS[k]["premise"])(p)


def _claim(p, k, rng):
    return rng.choice(ATTRS[k]["claim"])(p)


def _join(claims):
    """1-3 fact sentences as one claim."""
    if len(claims) == 1:
        return claims[0]
    return " ".join(claims)


def _premise(p, fake, rng, attrs, long, insert=None):
    """The premise: the person's fact sentences, shuffled, plus unrelated sentences (long bios);
    `insert`, a further sentence, at a random place."""
    other = Person(fake, rng)
    sents = [_sent(p, k, rng) for k in attrs if k != "lead"]
    rng.shuffle(sents)
    if "lead" in attrs:  # a lead sentence opens the text
        sents.insert(0, _sent(p, "lead", rng))
    if insert:
        sents.insert(rng.randint(0, len(sents)), insert)
    if long:
        target = rng.randint(max(4, len(sents)), 10)
        while len(sents) < target:
            sents.insert(rng.randint(1, len(sents)), filler(fake, rng, other))
    return " ".join(sents)


# Facts a person can hold several values of (awards, universities, professions): from v3 on,
# a claim of another value is neutral, not a contradiction (winning one prize does not exclude
# another). v2's recipe swaps them into contradictions, as v2 was made.
COMPATIBLE = {"award", "uni", "prof"}


def v2_example(rng, fake, long, compatible=False):
    """A v2 pair; `compatible`: another value of a COMPATIBLE fact is neutral (kind other:<attr>)."""
    p = Person(fake, rng)
    attrs = _premise_attrs(rng, long)
    premise = _premise(p, fake, rng, attrs, long)
    label = rng.choice(["entailment", "contradiction", "neutral"])
    n = rng.randint(1, min(3, len(attrs)))
    keys = rng.sample(attrs, n)
    if label == "entailment":
        return premise, _join([_claim(p, k, rng) for k in keys]), label, "entail"
    if label == "contradiction":
        # value-swap one of the claimed facts on a copy of the person (the others stay true)
        swappable = [k for k in keys if not (k == "died" and not p.died)]
        if not swappable:
            return premise, _join([_claim(p, k, rng) for k in keys]), "entailment", "entail"
        exclusive = [k for k in swappable if not (compatible and k in COMPATIBLE)]
        bad = rng.choice(exclusive or swappable)
        q = _copy(p)
        ATTRS[bad]["swap"](q, rng)
        claims = [_claim(q if k == bad else p, k, rng) for k in keys]
        if not exclusive:
            return premise, _join(claims), "neutral", f"other:{ATTRS[bad]['kind']}"
        return premise, _join(claims), label, f"swap:{ATTRS[bad]['kind']}"
    # neutral: one claimed fact more specific than the premise (half of them), or absent from it
    claims = [_claim(p, k, rng) for k in keys]
    if rng.random() < 0.5:
        k = rng.choice(keys)
        detail = rng.choice(SPECIFIC[k])(p, rng, fake) if k in SPECIFIC else None
        if detail is not None:
            claims[keys.index(k)] = detail
            return premise, _join(claims), label, f"more_specific:{k}"
    covered = set(attrs).union(*(COVERS.get(a, ()) for a in attrs))
    absent = [k for k in ATTRS if k not in covered and k not in ("award_year", "died")]
    if absent and rng.random() < 0.6:
        k = rng.choice(absent)
        claims[rng.randrange(len(claims))] = _claim(p, k, rng)
        return premise, _join(claims), label, f"absent:{k}"
    claims[rng.randrange(len(claims))] = rng.choice(EXTRA)(p, fake)
    return premise, _join(claims), label, "absent:extra"


def _copy(p):
    q = Person.__new__(Person)
    q.__dict__.update(p.__dict__)
    return q


# ---- v3: contradiction kinds beyond value swaps -------------------------------------------

def v3_example(rng, fake):
    """One of v3's extra kinds, with a long (or sometimes short) premise."""
    p = Person(fake, rng)
    kind = rng.choice(["negation", "ordinal", "cardinal", "temporal", "antonym", "far", "paraphrase", "hard_negative"])
    long = rng.random() < 0.75
    attrs = _premise_attrs(rng, long)
    if kind == "negation":
        k = rng.choice(attrs)
        stated = _claim(p, k, rng)
        label = rng.choice(["contradiction", "entailment"])
        neg = _negate(p, k)
        if neg is None:
            return v2_example(rng, fake, long, compatible=True)
        if label == "contradiction":   # premise states X, claim denies it
            return _premise(p, fake, rng, attrs, long), neg, label, "negation"
        # premise denies a fact (instead of stating it), the claim repeats the denial in other words
        # (the "born" wordings also name the city, nationality and profession)
        others = [a for a in attrs if a != k and not (a == "born" and k in ("city", "nat", "prof"))]
        premise = _premise(p, fake, rng, others, long, insert=neg)
        if rng.random() < 0.5:
            return premise, stated, "contradiction", "negation"
        return premise, neg, "entailment", "negation"
    if kind == "ordinal":
        s = f"{p.name} was the {ORDINALS[p.birth_order - 1]} of {NUMBER_WORDS[p.siblings]} children."
        premise = _premise(p, fake, rng, attrs, long, insert=s)
        label = rng.choice(["contradiction", "entailment", "neutral"])
        if label == "entailment":
            return premise, f"{p.name} was the {ORDINALS[p.birth_order - 1]} child of {p.his} parents.", label, "ordinal"
        if label == "contradiction":
            o = _other(range(1, p.siblings + 1), p.birth_order, rng) if p.siblings > 1 else p.birth_order + 1
            return premise, f"{p.name} was the {ORDINALS[o - 1]} child of {p.his} parents.", label, "ordinal"
        return premise, f"{p.name} was the {ORDINALS[p.birth_order - 1]} {p.nat} {p.prof} to win {p.award}.", label, "ordinal"
    if kind == "cardinal":
        k = rng.choice(["children", "works"])
        if k not in attrs:
            attrs = attrs[:-1] + [k]
        premise = _premise(p, fake, rng, attrs, long)
        label = rng.choice(["contradiction", "entailment"])
        if label == "contradiction":
            q = _copy(p)
            ATTRS[k]["swap"](q, rng)
            return premise, _claim(q, k, rng), label, "cardinal"
        return premise, _claim(p, k, rng), label, "cardinal"
    if kind == "temporal":
        s = f"In {p.move_year}, {p.name} moved to {p.move_city}."
        premise = _premise(p, fake, rng, [a for a in attrs if a != "uni"] + ["uni"], long, insert=s)
        before = p.move_year < p.grad
        label = rng.choice(["contradiction", "entailment"])
        truth = "before" if before else "after"
        word = truth if label == "entailment" else ("after" if before else "before")
        return premise, f"{p.name} moved to {p.move_city} {word} graduating from {p.uni}.", label, "temporal"
    if kind == "antonym":
        yes, no = p.antonym if rng.random() < 0.5 else p.antonym[::-1]
        premise = _premise(p, fake, rng, attrs, long, insert=f"In {p.award_year - 2}, {p.name} {yes}.")
        label = rng.choice(["contradiction", "entailment"])
        return premise, f"{p.name} {yes if label == 'entailment' else no}.", label, "antonym"
    if kind == "far":
        # the claimed fact is stated once, at the very end of a long premise (past the first window)
        k = rng.choice([a for a in ATTRS if a not in ("award_year", "died")])
        rest = [a for a in _premise_attrs(rng, True) if a != k]
        premise = _premise(p, fake, rng, rest, True)
        extra = " ".join(filler(fake, rng, Person(fake, rng)) for _ in range(rng.randint(3, 8)))
        premise = premise + " " + extra + " " + _sent(p, k, rng)
        label = rng.choice(["contradiction", "entailment"])
        if label == "contradiction":
            q = _copy(p)
            ATTRS[k]["swap"](q, rng)
            # another value of a fact one can hold several of: neutral
            return premise, _claim(q, k, rng), "neutral" if k in COMPATIBLE else label, "far"
        return premise, _claim(p, k, rng), label, "far"
    if kind == "paraphrase":
        k = rng.choice(attrs)
        para = _paraphrase(p, k)
        if para is None:
            return v2_example(rng, fake, long, compatible=True)
        return _premise(p, fake, rng, attrs, long), para, "entailment", "paraphrase"
    # hard_negative: the premise is about another person and shares the claim's words
    # (city, university, award), but says nothing about the claim's subject.
    other = Person(fake, rng)
    for a in ("city", "uni", "award", "prof", "nat"):
        setattr(other, a, getattr(p, a))
    other.country, other.born, other.award_year = p.country, p.born, p.award_year
    premise = _premise(other, fake, rng, attrs, long)
    k = rng.choice(attrs)
    return premise, _claim(p, k, rng), "neutral", "hard_negative"


def _negate(p, k):
    return {
        "uni": f"{p.name} never studied at {p.uni}.",
        "award": f"{p.name} never won {p.award}.",
        "spouse": f"{p.name} never married {p.spouse}.",
        "city": f"{p.name} was not born in {p.city}.",
        "prof": f"{p.name} never worked as {an(p.prof)}.",
        "nat": f"{p.name} is not {p.nat}.",
        "children": f"{p.name} had no children.",
        "born": f"{p.name} was not born in {p.born}.",
        "debut": f"{p.name} did not begin {p.his} career until after {p.debut + 10}.",
    }.get(k)


def _paraphrase(p, k):
    return {
        "born": f"{p.name} came into the world in {p.born}.",
        "city": f"{p.city} is the city where {p.name} was born.",
        "nat": f"{p.name} is a citizen of {p.country}.",
        "prof": f"By profession, {p.name} is {an(p.prof)}.",
        "uni": f"{p.name} is an alumnus of {p.uni}.",
        "award": f"{p.award} was given to {p.name}.",
        "spouse": f"{p.spouse} is {p.name}'s spouse.",
        "children": f"{p.name} is a parent.",
        "works": f"{p.name} has produced more than {max(1, p.nworks - 2)} {p.works}.",
        "debut": f"{p.name}'s career began in {p.debut}.",
        "died": f"{p.name} passed away in {p.died}." if p.died else None,
    }.get(k)


def example(seed, kind):
    """One pair from its own seed: kind 'long', 'short' (v2's bios), 'long_v3', 'short_v3' (the
    same with COMPATIBLE facts neutral) or 'v3' (v3's extra kinds)."""
    rng = random.Random(seed)
    fake = _faker()
    fake.seed_instance(seed)
    if kind == "v3":
        premise, hyp, label, k = v3_example(rng, fake)
    else:
        premise, hyp, label, k = v2_example(rng, fake, kind.startswith("long"), compatible=kind.endswith("_v3"))
    return {"premise": premise, "hypothesis": hyp, "label": LABELS[label], "kind": k, "seed": seed}


_FAKE = None


def _faker():
    global _FAKE
    if _FAKE is None:
        _FAKE = Faker("en_US")
    return _FAKE
