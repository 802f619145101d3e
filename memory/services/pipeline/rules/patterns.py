"""The patterns of the rule-based extractor, most specific first, each with
the key words a clause must hold for it to be tried, and the topics a
"forget what I said about ..." retracts."""

from __future__ import annotations

import re

from memory.services.pipeline.rules import lexicon as lx
from memory.services.pipeline.rules.builders import (
    _age,
    _allergy,
    _allergy_noun,
    _avoids,
    _birthday,
    _born_in,
    _coffee,
    _condition,
    _diet,
    _diet_named,
    _favorite,
    _graduated,
    _greeting_name,
    _intolerance,
    _learning,
    _likes,
    _name,
    _nationality,
    _nickname,
    _no_diet,
    _partner,
    _person_fact,
    _pet_named,
    _place_fact,
    _prefers,
    _project,
    _relation_name,
    _role,
    _school,
    _studies,
    _studies_at,
    _used_to,
    _uses,
    _uses_many,
    _works_at,
)
from memory.services.pipeline.rules.slots import Builder, _retraction
from memory.services.pipeline.rules.text import (
    _ADV,
    _BREED,
    _COND,
    _COND_ADJ,
    _DIET,
    _I_AM,
    _MOD,
    _NAME,
    _NAT,
    _O,
    _PET,
    _REL,
    _WE_ARE,
)

_TOPICS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"\b(?:my (?:job|work|employer|company|workplace|office)|where i work)\b", re.I),
        "works_at",
    ),
    (
        re.compile(
            r"\b(?:where i live|where i'm based|my (?:old |new )?(?:address|home|flat|apartment|city|house))\b",
            re.I,
        ),
        "lives_in",
    ),
    (re.compile(r"\bmy (?:job title|role|position)\b", re.I), "role"),
    (re.compile(r"\bmy diet\b", re.I), "diet"),
    (re.compile(r"\bmy age\b|\bhow old i am\b", re.I), "age"),
    (re.compile(r"\bmy birthday\b", re.I), "birthday"),
    (re.compile(r"\bmy allerg(?:y|ies)\b", re.I), "allergic_to"),
    (re.compile(r"\bmy nickname\b", re.I), "nickname"),
    (re.compile(r"\bmy studies\b|\bwhat i study\b", re.I), "studies"),
]
_FORGET = re.compile(
    r"^(?:please\s+|(?:can|could) you\s+)?forget\s+(?:(?:what|everything|all)\s+(?:that\s+)?i\s+"
    r"(?:said|told you|mentioned|wrote)\s+about|about|everything about)\s+(?P<t>.+)",
    re.I,
)
_FORGET_THAT = re.compile(r"^(?:please\s+)?forget\s+that\s+(?P<c>.+)", re.I)


# The patterns, most specific first: a span one explains is not read again by
# a later, more general one ("I used to live in Paris" is no home).
PATTERNS: list[tuple[str, re.Pattern[str], Builder]] = [
    # retractions
    (
        "live reside",
        re.compile(
            rf"\b(?:i|we) (?:no longer|don't|do not) (?:live|reside) in {_O}(?= any ?more|$)", re.I
        ),
        _used_to("lives_in"),
    ),
    (
        "live reside",
        re.compile(rf"\b(?:i|we) no longer (?:live|reside) in {_O}", re.I),
        _used_to("lives_in"),
    ),
    (
        "live reside",
        re.compile(rf"\b(?:i|we) used to (?:live|reside) in {_O}", re.I),
        _used_to("lives_in"),
    ),
    (
        "work",
        re.compile(
            rf"\bi (?:no longer work (?:at|for)|(?:don't|do not) work (?:at|for) (?=.*any ?more)|"
            rf"used to work (?:at|for)){_O}",
            re.I,
        ),
        _used_to("works_at"),
    ),
    ("no longer", re.compile(rf"\b{_I_AM} no longer (?:at|with) {_O}", re.I), _used_to("works_at")),
    (
        "quit left lost fired laid",
        re.compile(
            r"\bi (?:quit|left|lost) my (?:job|position)\b|\bi (?:got fired|was fired|got laid off|was laid off)\b",
            re.I,
        ),
        lambda m, t: [_retraction("works_at", "")],
    ),
    (
        "quit",
        re.compile(r"^(?:so |well |and )?i (?:just |finally )?quit\W*$", re.I),
        lambda m, t: [_retraction("works_at", "")],
    ),
    (
        "quit left",
        re.compile(
            r"\bi (?:quit|left) (?!my\b|smoking|drinking|social|school|home|early|the\b)(?P<o>[^.;!?]+)",
            re.I,
        ),
        lambda m, t: [_retraction("works_at", o)] if (o := t.org(m.group("o"))) else [],
    ),
    (
        "no longer not",
        re.compile(
            rf"\b{_I_AM} (?:no longer (?:a|an)|not (?:a|an)) (?=.*\b(?:any ?more|no longer)\b|){_O}",
            re.I,
        ),
        lambda m, t: (
            [_retraction("role", r)]
            if (r := t.role(m.group("o"))[0])
            and re.search(r"no longer|any ?more", m.group(0), re.I)
            else []
        ),
    ),
    ("used to be", re.compile(rf"\bi used to be (?:a|an) {_O}", re.I), _used_to("role")),
    (
        "no longer not",
        re.compile(
            rf"\b{_WE_ARE} (?:no longer|not) (?:a |an )?(?P<d>{_DIET})\b(?=.*\b(?:any ?more)\b|)",
            re.I,
        ),
        lambda m, t: _no_diet(m, t) if re.search(r"no longer|any ?more", m.string, re.I) else [],
    ),
    (
        "being",
        re.compile(rf"\bi (?:stopped|quit) being (?:a |an )?(?P<d>{_DIET})\b", re.I),
        _no_diet,
    ),
    (
        "used to be",
        re.compile(rf"\bi used to be (?:a |an )?(?P<o>(?:{_DIET}))\b", re.I),
        _used_to("diet"),
    ),
    (
        "allergic",
        re.compile(rf"\b{_I_AM} no longer allergic to {_O}", re.I),
        lambda m, t: [_retraction("allergic_to", i) for i in t.things(m.group("o"))],
    ),
    (
        "have",
        re.compile(rf"\bi (?:don't|do not) have (?:a|an) (?P<p>{_PET}) any ?more\b", re.I),
        lambda m, t: [_retraction(lx.PETS[m.group("p").lower()], "")],
    ),
    (
        "like love enjoy",
        re.compile(
            r"\bi (?:no longer |(?:don't|do not) (?=(?:like|love|enjoy) [^.;!?]+ any ?more))"
            rf"(?:like|love|enjoy) {_O}",
            re.I,
        ),
        _used_to("likes"),
    ),
    (
        "used to",
        re.compile(rf"\bi used to (?:really )?(?:love|like|enjoy|adore) {_O}", re.I),
        _used_to("likes"),
    ),
    (
        "used to",
        re.compile(rf"\bi used to (?:really )?(?:hate|dislike|detest) {_O}", re.I),
        _used_to("dislikes"),
    ),
    # identity
    ("name", re.compile(rf"\bmy (?:full )?(?:name is|name's) {_NAME}", re.I), _name),
    ("called", re.compile(rf"\b{_I_AM} called {_NAME}", re.I), _name),
    (
        "name's",
        re.compile(rf"^(?:(?:hi|hey|hello)(?: there)?[,!.]*\s+)?name's {_NAME}", re.I),
        _name,
    ),
    (
        "i'm",
        re.compile(
            r"^(?:hi|hello|hey)(?: there| all| everyone)?[,!.]*\s+i'm (?P<o>[^.;!?]+)", re.I
        ),
        _greeting_name,
    ),
    (
        "call go by nickname know me",
        re.compile(
            r"\b(?:(?:you can |just |please )?call me|i go by|(?:everyone|everybody|people|most people|"
            r"(?:my )?friends|my family|my mates) (?:just )?(?:call|calls) me|my nickname is|people know me as) "
            + _NAME,
            re.I,
        ),
        _nickname,
    ),
    (
        "i'm i am turned",
        re.compile(
            rf"\b(?:{_I_AM}|i (?:just |recently )?turned) (?P<o>\d{{1,3}})"
            r"(?= years? old| yrs? old| y/?o\b|\s*$|\s*[,.!;]| and\b| now\b| so\b| but\b| this\b| last\b| in\b)",
            re.I,
        ),
        _age,
    ),
    (
        "birthday bday b-day",
        re.compile(r"\bmy (?:birthday|bday|b-day)(?:'s| is)(?: on)? (?P<o>[^.;!?]+)", re.I),
        _birthday,
    ),
    ("born", re.compile(r"\bi was born on (?P<o>[^.;!?]+)", re.I), _birthday),
    (
        "i'm i am",
        re.compile(
            rf"^(?:and |also )?{_I_AM} (?:half[- ])?(?P<o>{_NAT})\b(?! (?:food|cuisine|wine|beer|films?|music|breakfast))",
            re.I,
        ),
        _nationality,
    ),
    # partners and people
    (
        "married wed",
        re.compile(rf"\b{_I_AM} (?:married to|(?:now )?wed to) {_O}", re.I),
        _partner("spouse"),
    ),
    ("married wed", re.compile(r"\bi (?:married|wed) (?P<o>[^.;!?]+)", re.I), _partner("spouse")),
    ("engaged", re.compile(rf"\b{_I_AM} engaged to {_O}", re.I), _partner("fiance")),
    (
        "dating seeing going out",
        re.compile(rf"\bi(?:'ve| have)? been (?:dating|seeing|going out with) {_O}", re.I),
        _partner("partner"),
    ),
    (
        "got have adopted rescued",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:got|have|adopted|rescued|got us) (?:two|three|2|3) "
            r"(?P<rel>cats|dogs|kittens|puppies|rabbits)[,:]? (?P<o>[^.;!?]+)",
            re.I,
        ),
        _pet_named,
    ),
    (
        "have got adopted rescued own brought",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:just )?(?:have|got|adopted|rescued|own|brought home) (?:a|an) "
            rf"(?:\w+ )?(?P<rel>{_BREED}|{_PET}|{_REL})(?: (?:named|called)|,? (?:his|her|its) name is) (?P<o>[^.;!?]+)",
            re.I,
        ),
        _pet_named,
    ),
    (
        "lives moved relocated based living works working studies studying is 's",
        re.compile(
            r"^(?:(?:and|but|so|also|oh|well|btw)\s+)*"
            rf"(?:(?:my|our) {_MOD}(?P<rel>{_REL}|{_PET}|{_BREED})(?:,? (?P<name>[\w'-]+(?: [\w'-]+)?),?)?|(?P<pron>she|he)|"
            r"(?P<who>[\w'-]+(?: [\w'-]+)?))"
            rf"(?: {_ADV}|(?='))(?P<verb>lives in|lives|moved to|relocated to|is based in|is living in|works (?:at|for)|"
            r"is working (?:at|for)|studies at|is studying at|is (?:now )?(?:a|an)|'s (?:now )?(?:a|an)) "
            r"(?P<o>[^.;!?]+)",
            re.I,
        ),
        _person_fact,
    ),
    (
        "my our",
        re.compile(
            rf"\b(?:my|our) {_MOD}(?P<rel>{_REL}|{_PET}|{_BREED})(?:'s name is| is called| is named| is an? [\w -]{{2,24}}? (?:called|named)| is|,)? {_NAME}",
            re.I,
        ),
        _relation_name,
    ),
    (
        "my our",
        re.compile(rf"\b(?P<o>[\w'-]+) is (?:my|our) (?P<rel>{_REL})\b(?!')", re.I),
        _relation_name,
    ),
    # education before work: "I'm a student at X" is a school, not a job
    (
        "student undergrad postgrad fresher",
        re.compile(
            rf"\b{_I_AM} (?:a |an )?(?:[\w'-]+ ){{0,2}}(?:student|undergrad|undergraduate|postgrad|"
            rf"postgraduate|fresher) at {_O}",
            re.I,
        ),
        _studies_at,
    ),
    ("go to attend", re.compile(rf"\bi (?:go to|attend) {_O}", re.I), _school),
    ("graduated", re.compile(rf"\bi graduated from {_O}", re.I), _graduated),
    (
        "study studying major reading doing taking",
        re.compile(
            rf"\b(?:i (?:study|major in)|{_I_AM} (?:studying|majoring in)(?: for a degree in)?|"
            rf"{_I_AM} (?:doing|taking) (?:a |an |my )?(?:master'?s|masters|phd|doctorate|degree|"
            rf"bachelor'?s|ba|bsc|msc|ma|mba|course)(?: degree)? in|{_I_AM} reading(?= [^.;!?]* at\b)) {_O}",
            re.I,
        ),
        _studies,
    ),
    # work and home
    (
        "i'm i am work as become my job working as",
        re.compile(
            rf"\b(?:{_I_AM}(?: now| currently)? (?:a|an)|i work as (?:a|an)|i(?:'ve| have) become (?:a|an)|"
            rf"my job is(?: a| an)?|i(?:'m| am) working as (?:a|an)) {_O}",
            re.I,
        ),
        _role,
    ),
    (
        "work employ",
        re.compile(
            rf"\b(?:(?:i|we)(?: now| both| still| currently)? work (?:at|for)|{_I_AM} (?:now )?working (?:at|for)|i(?:'ve| have) been working (?:at|for)|"
            rf"{_I_AM} employed (?:at|by)|my employer is) {_O}",
            re.I,
        ),
        _works_at(0.8),
    ),
    (
        "joined job started starting",
        re.compile(
            rf"\b(?:i(?:'ve| have)? (?:just |recently |finally )?joined|i got a (?:new )?job (?:at|with)|"
            rf"i (?:just |recently )?started (?:a new job |working |my new job )?at|"
            rf"(?:new job[!.,]* )?starting (?:at|with)|^(?:just )?(?:started|joined) (?:a new job |my new job |work )?(?:at|with)) {_O}",
            re.I,
        ),
        _works_at(0.75, common=False),
    ),
    (
        "live reside living based moved relocated home",
        re.compile(
            rf"\b(?:(?:i|we)(?: now| both| still)? (?:live|reside)|{_WE_ARE} (?:now |currently )?(?:living|based)|"
            rf"(?:i|we)(?:'ve| have) been living|"
            rf"(?:i|we)(?:'ve| have)? (?:just |recently |finally |now |also )*(?:moved|relocated)"
            rf"(?: back| over| here)?(?: from [^,.;!?]+?)?|my home is|home is) (?:in|to)? ?{_O}",
            re.I,
        ),
        _place_fact("lives_in", "User lives in {o}", 0.8),
    ),
    (
        "moved into",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? (?:just |recently |finally )?moved into (?:a|an|our|my) "
            rf"(?:new )?(?:\w+ )?(?:place|flat|house|home|apartment) in {_O}",
            re.I,
        ),
        _place_fact("lives_in", "User lives in {o}", 0.75),
    ),
    (
        "home",
        re.compile(rf"^home is {_O}", re.I),
        _place_fact("lives_in", "User lives in {o}", 0.75),
    ),
    (
        "from grew up",
        re.compile(rf"\b(?:{_I_AM} (?:originally )?from|i come from|i grew up in) {_O}", re.I),
        _place_fact("from", "User is from {o}", 0.6),
    ),
    ("born", re.compile(rf"\bi was born in {_O}", re.I), _born_in),
    # health
    ("allergic", re.compile(rf"\b{_WE_ARE} (?:\w+ly )?allergic to {_O}", re.I), _allergy),
    (
        "allergy",
        re.compile(
            r"\bi have (?:a |an )?(?:severe |mild |bad |serious )?(?P<o>[a-z-]+) allergy\b", re.I
        ),
        _allergy_noun,
    ),
    (
        "intolerant",
        re.compile(rf"\b{_I_AM} (?P<o>lactose|gluten|fructose|histamine|dairy) intolerant\b", re.I),
        _intolerance,
    ),
    (
        "gone been become turned went",
        re.compile(
            rf"\b(?:i|we)(?:'ve| have)? (?:gone|been|become|turned|went) (?P<d>{_DIET})\b", re.I
        ),
        _diet,
    ),
    (
        "i'm i am we're we are",
        re.compile(
            rf"\b{_WE_ARE}(?: now| also| fully| strictly| both| mostly)? (?:a |an )?(?P<d>{_DIET})\b"
            r"(?! (?:restaurant|food|recipes?|options?|place|dish|menu|friendly))",
            re.I,
        ),
        _diet,
    ),
    (
        "diet",
        re.compile(
            r"\b(?:i(?:'m| am) on an?|i (?:follow|keep|eat) an?) (?P<o>[\w-]+) diet\b", re.I
        ),
        _diet_named,
    ),
    (
        "have suffer diagnosed live with",
        re.compile(
            rf"\bi (?:have|suffer from|was diagnosed with|live with)(?: (?:mild|severe|chronic|bad))? (?P<o>{_COND})\b",
            re.I,
        ),
        _condition,
    ),
    ("i'm i am", re.compile(rf"\b{_I_AM} (?:a )?(?P<o>{_COND_ADJ})\b", re.I), _condition),
    (
        "eat drink",
        re.compile(rf"\bi (?:don't|do not|can't|cannot|never) (?:eat|drink) {_O}", re.I),
        _avoids,
    ),
    # projects and tools
    (
        "building developing making creating writing working designing launching",
        re.compile(
            rf"\b{_WE_ARE}(?: currently| also| still| now)? (?:building|developing|making|creating|writing|"
            rf"working on|designing|launching) {_O}",
            re.I,
        ),
        _project,
    ),
    (
        "project",
        re.compile(
            rf"\bmy (?:side |pet |hobby |current |latest |new |main )?project is {_O}", re.I
        ),
        _project,
    ),
    (
        "called named",
        re.compile(
            rf"\b(?:i|we) (?:maintain|run|founded|started|built|created|wrote) (?=[^.;!?]*\b(?:called|named)\b){_O}",
            re.I,
        ),
        _project,
    ),
    (
        "use",
        re.compile(rf"\b(?:i|we)(?: mostly| mainly| also| now| still| only| both)? use {_O}", re.I),
        _uses,
    ),
    (
        "switched migrated",
        re.compile(rf"\bi(?:'ve| have) (?:just )?(?:switched|migrated) to {_O}", re.I),
        _uses,
    ),
    (
        "code program develop deploy",
        re.compile(
            rf"\b(?:i|we) (?:mostly |mainly )?(?:code|program|develop|write code|deploy) (?:in|on|to) {_O}",
            re.I,
        ),
        _uses_many,
    ),
    ("stack", re.compile(rf"\b(?:my|our) (?:tech |main |usual )?stack is {_O}", re.I), _uses_many),
    (
        "learning",
        re.compile(rf"\b{_WE_ARE} (?:currently |also |slowly )?learning {_O}", re.I),
        _learning,
    ),
    # preferences
    (
        "my coffee my tea",
        re.compile(
            r"\bi (?:like|take|drink|have) my (?P<n>coffee|tea) (?P<a>black|white|strong|weak|sweet)\b",
            re.I,
        ),
        _coffee,
    ),
    (
        "hate dislike detest stand like enjoy fan into loathe",
        re.compile(
            r"\b(?:i (?:really |absolutely |truly |kind of |kinda |genuinely )?(?:hate|dislike|detest|"
            r"can't stand|cannot stand|don't like|do not like|don't enjoy|do not enjoy|loathe)|"
            rf"{_I_AM} (?:not|never) (?:a |much of a )?(?:big |huge )?fan of|{_I_AM} not (?:really )?into) {_O}",
            re.I,
        ),
        _likes("dislikes"),
    ),
    (
        "prefer",
        re.compile(
            rf"\b(?:i(?:'d| would)? (?:really |much |strongly |generally |usually |always )?prefer) {_O}",
            re.I,
        ),
        _prefers,
    ),
    (
        "drink eat",
        re.compile(rf"\bi (?:now |only |mostly |just )+(?:drink|eat) {_O}", re.I),
        _prefers,
    ),
    (
        "favorite favourite",
        re.compile(r"\bmy favou?rite (?P<what>[\w ]{2,30}?) (?:is|are) " + _O, re.I),
        _favorite,
    ),
    (
        "love like enjoy adore fan into obsessed",
        re.compile(
            r"(?<!would )(?<!'d )\b(?:i (?:really |absolutely |truly |just |also |genuinely |kinda |kind of )?"
            r"(?:love|like|enjoy|adore)|i(?:'ve| have) always (?:loved|liked|enjoyed)|"
            rf"{_I_AM} (?:really |so |very |more |mostly |now )*(?:into|obsessed with)|"
            rf"(?:{_I_AM} )?(?:a )?(?:big |huge |massive )fan of|{_I_AM} a fan of) {_O}",
            re.I,
        ),
        _likes("likes"),
    ),
]


# Each pattern's key words, split once: a clause must contain one of them.
_NEEDS = {needs: tuple(needs.split()) for needs, _, _ in PATTERNS}
