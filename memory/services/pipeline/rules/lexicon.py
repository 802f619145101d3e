"""Word lists the rule-based extractor checks its slots against.

The extractor is precise first: a slot is filled only by a word that fits it.
"I'm a nurse" is a role because "nurse" is a job; "I'm a night owl" is not.
Lists are lower case; multi-word entries are matched as whole phrases."""

from __future__ import annotations

# The head noun of a job title ("senior backend developer" -> developer).
ROLE_HEADS = frozenset(
    """
    accountant actor actress actuary administrator advisor adviser agent analyst animator
    anaesthetist anesthetist archaeologist architect archivist artist assistant astronomer
    attorney auditor author baker banker barber barista barrister bartender biologist
    bookkeeper builder butcher buyer carer caretaker carpenter cashier ceo cfo chef chemist
    cleaner clerk coach composer consultant coo copywriter counsellor counselor courier cto
    curator dancer dentist designer detective developer dietitian dietician diplomat director
    doctor driver ecologist economist editor electrician engineer entrepreneur epidemiologist
    farmer filmmaker firefighter florist founder co-founder cofounder gardener geologist gp
    hairdresser historian housekeeper illustrator instructor intern interpreter investigator
    janitor jeweller jeweler journalist judge lawyer lecturer librarian lifeguard linguist
    locksmith machinist manager marketer mathematician mechanic midwife miner musician nanny
    neurologist neuroscientist nurse nutritionist officer optician optometrist painter
    paralegal paramedic pharmacist photographer physician physicist physio physiotherapist
    pilot plumber podcaster poet postdoc postman priest principal producer professor
    programmer psychiatrist psychologist publisher radiographer radiologist rabbi realtor
    receptionist recruiter reporter researcher sailor salesman saleswoman salesperson scientist
    secretary senator singer solicitor sommelier statistician stylist supervisor surgeon
    surveyor tailor teacher technician therapist trader trainer translator tutor vet
    veterinarian waiter waitress welder writer youtuber zoologist headteacher headmaster
    paediatrician pediatrician dermatologist cardiologist oncologist psychotherapist
    sysadmin tester ux planner minister pastor vicar soldier marine contractor freelancer
    """.split()
)
# Words that make "a <X> <head>" a judgement rather than a title.
ROLE_FILLERS = frozenset(
    "bit little lot big huge total complete good bad great terrible awful decent real proper "
    "fan person morning night early late quick slow very really pretty massive".split()
)

DIETS = {
    "vegetarian": "vegetarian",
    "veggie": "vegetarian",
    "vegan": "vegan",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "flexitarian": "flexitarian",
    "plant-based": "plant-based",
    "keto": "keto",
    "paleo": "paleo",
    "kosher": "kosher",
    "halal": "halal",
    "teetotal": "teetotal",
}
# "I have X" / "I'm X" that name a lasting health condition.
CONDITIONS = frozenset(
    """
    asthma diabetes eczema epilepsy arthritis adhd autism dyslexia migraines migraine
    psoriasis anaemia anemia hypertension tinnitus endometriosis fibromyalgia lupus ibs
    """.split()
)
CONDITION_PHRASES = (
    "type 1 diabetes",
    "type 2 diabetes",
    "coeliac disease",
    "celiac disease",
    "crohn's disease",
    "high blood pressure",
    "sleep apnea",
    "sleep apnoea",
    "chronic fatigue",
    "multiple sclerosis",
)
CONDITION_ADJECTIVES = {
    "coeliac": "coeliac disease",
    "celiac": "celiac disease",
    "diabetic": "diabetes",
    "epileptic": "epilepsy",
    "asthmatic": "asthma",
    "dyslexic": "dyslexia",
    "autistic": "autism",
}

NATIONALITIES = frozenset(
    """
    american argentinian australian austrian belgian brazilian british bulgarian canadian
    chilean chinese colombian croatian czech danish dutch egyptian english estonian
    ethiopian filipino finnish french german ghanaian greek hungarian icelandic indian
    indonesian iranian irish israeli italian jamaican japanese kenyan korean latvian
    lebanese lithuanian malaysian mexican moroccan nigerian norwegian pakistani peruvian
    polish portuguese romanian russian scottish serbian singaporean slovak slovenian
    spanish swedish swiss taiwanese thai turkish ukrainian venezuelan vietnamese welsh
    """.split()
)

PETS = {
    "dog": "dog",
    "puppy": "dog",
    "pup": "dog",
    "cat": "cat",
    "kitten": "cat",
    "kitty": "cat",
    "rabbit": "rabbit",
    "bunny": "rabbit",
    "hamster": "hamster",
    "parrot": "parrot",
    "budgie": "budgie",
    "tortoise": "tortoise",
    "turtle": "turtle",
    "horse": "horse",
    "pony": "horse",
    "guinea pig": "guinea_pig",
    "ferret": "ferret",
    "gecko": "gecko",
    "snake": "snake",
    "goldfish": "fish",
    "pet": "pet",
}
BREEDS = {
    **dict.fromkeys(
        "golden retriever|labrador|lab|beagle|poodle|terrier|spaniel|collie|pug|dachshund|"
        "husky|greyhound|whippet|corgi|boxer|bulldog|schnauzer|chihuahua|shih tzu|rottweiler|"
        "german shepherd|border collie|cockapoo|labradoodle|dalmatian|lurcher".split("|"),
        "dog",
    ),
    **dict.fromkeys("tabby|siamese|persian|maine coon|ragdoll|bengal|sphynx".split("|"), "cat"),
}

RELATIONS = {
    "wife": "wife",
    "husband": "husband",
    "partner": "partner",
    "spouse": "spouse",
    "girlfriend": "girlfriend",
    "boyfriend": "boyfriend",
    "fiancé": "fiance",
    "fiance": "fiance",
    "fiancée": "fiancee",
    "fiancee": "fiancee",
    "sister": "sister",
    "brother": "brother",
    "mother": "mom",
    "mom": "mom",
    "mum": "mom",
    "mommy": "mom",
    "father": "dad",
    "dad": "dad",
    "son": "son",
    "daughter": "daughter",
    "best friend": "best_friend",
    "best mate": "best_friend",
    "mate": "friend",
    "friend": "friend",
    "boss": "boss",
    "manager": "manager",
    "colleague": "colleague",
    "coworker": "coworker",
    "co-worker": "coworker",
    "roommate": "roommate",
    "flatmate": "roommate",
    "housemate": "roommate",
    "cousin": "cousin",
    "aunt": "aunt",
    "uncle": "uncle",
    "grandmother": "grandmother",
    "grandma": "grandmother",
    "granny": "grandmother",
    "nan": "grandmother",
    "grandfather": "grandfather",
    "grandpa": "grandfather",
    "grandad": "grandfather",
    "niece": "niece",
    "nephew": "nephew",
    "mentor": "mentor",
    "neighbour": "neighbour",
    "neighbor": "neighbour",
    "stepdad": "stepdad",
    "stepmom": "stepmom",
    "stepmum": "stepmom",
    "twin": "twin",
    "teacher": "teacher",
    "therapist": "therapist",
    "doctor": "doctor",
    "nanny": "nanny",
    "childminder": "nanny",
    "babysitter": "babysitter",
    "grandson": "grandson",
    "granddaughter": "granddaughter",
    "godmother": "godmother",
    "godfather": "godfather",
    "stepson": "stepson",
    "stepdaughter": "stepdaughter",
}

# Tools recognised in all-lower-case text, where capitals cannot say "a name".
TOOLS = {
    t.lower(): t
    for t in """
    VSCode Vim Neovim Emacs IntelliJ PyCharm Xcode Linux Ubuntu Debian Fedora Arch Windows macOS
    Python JavaScript TypeScript Rust Go Java Kotlin Swift Ruby PHP Elixir Haskell Scala Clojure
    Django Flask FastAPI Rails React Vue Svelte Angular Postgres PostgreSQL MySQL SQLite Redis
    Docker Kubernetes Terraform AWS GCP Azure Jira Linear Notion Obsidian Figma Slack Trello
    Asana GitHub GitLab Excel Photoshop Lightroom Blender Unity Unreal Logseq Todoist Zotero
    """.split()
}

# Words that never start a name, a place or an organisation in lower-case text,
# nor end up as one: "call me crazy", "I live in hope", "I work at night".
COMMON = frozenset(
    """
    a an the this that these those it its it's them they their there here then than
    me my mine you your yours him his her hers we our ours us one ones someone anyone
    everyone nobody somebody anybody something anything everything nothing
    and or but so because since if when while where what who whom which how why whether
    as at by for from in into of on onto to with without about above after against along
    among around before behind below beneath beside between beyond down during except
    inside near off out outside over past through throughout toward towards under until
    up upon within is am are was were be been being do does did done have has had having
    will would shall should can could may might must not no yes never always often sometimes
    usually again ever just only also too very really quite rather pretty so such
    now today tonight tomorrow yesterday later soon early late back home away anyway
    anymore already still yet ok okay lol haha thanks thank please sorry well oh hey hi
    hello bye crazy old-fashioned names maybe later whenever anytime sir madam
    hope fear denial peace harmony comfort luxury poverty style sin silence limbo debt
    bed work school town city country world area neighbourhood neighborhood flat house
    apartment place moment morning evening afternoon night weekend weekends week month
    year years days day time times lot lots bit little much many more most less least
    big small good bad great best better worse worst first last next other same
    own sure fine right wrong real whole sort kind type way thing things stuff
    lives live lived works work worked moved relocated is isn't hates hate loves love likes like
    studies study says said thinks think knows has hasn't goes went gets got makes made keeps
    wants needs plays runs started just teaches one two three four five six seven eight
    came gave wrote passed said made took told left sent brought found thought met loved helped
    asked called used tried wanted needed showed bought taught drove flew sang cooked baked
    painted invited visited sees saw gives takes comes writes sends brings
    nine ten twelve
    """.split()
)
# A lower-case word after "the" that is a time, not an employer ("at the weekend").
TIME_WORDS = frozenset(
    "weekend weekends moment minute minutes night evening morning afternoon time end start "
    "beginning same".split()
)
# Objects of "I like/love/prefer ..." that point at something in the chat, not a taste.
DEICTIC_HEADS = frozenset(
    "option version draft answer idea one suggestion approach reply response plan answers "
    "ideas suggestions options choice example proposal solution format layout wording".split()
)

# Past-tense verbs that make a dated first-person clause an event worth keeping.
EVENT_VERBS = frozenset(
    """
    ran run got started visited passed went broke graduated had bought met adopted finished
    hosted climbed lost celebrated sold attended quit gave opened won completed launched
    married retired travelled traveled flew returned published signed joined founded
    organised organized painted performed competed volunteered raised donated booked became
    welcomed hiked cycled swam camped interviewed presented released enrolled applied fell
    crashed injured sprained tore fractured divorced proposed eloped renovated took tried
    """.split()
)
# Everyday uses of common verbs that are no event worth a fact ("I went
# shopping", "I had pasta", "I took this pic"); any other use is one ("I had a
# health scare", "we took the kids on a road trip").
TRIVIAL_EVENTS = {
    "went": r"\bwent (?:to (?:bed|sleep|work|school|the (?:gym|shops?|office|supermarket|store|pub|loo|toilet))|"
    r"shopping|home|back|out|for (?:a )?(?:walk|run|coffee|drink|drinks|lunch|dinner))\b",
    "had": r"\bhad (?:a |an |some |my |our )?(?:\w+ )?(?:lunch|dinner|breakfast|brunch|coffee|tea|pasta|pizza|"
    r"beer|drink|drinks|snack|snacks|nap|shower|bath|look|chat|word|question|headache|cold|sandwich|"
    r"salad|burger|curry|soup|meal|bite)\b|\bhad (?:to|it|that|this|no|nothing|enough)\b",
    "got": r"\bgot (?:it|home|back|up|there|here|bored|tired|a (?:message|text|call|email)|an email|"
    r"that|this|nothing)\b",
    "took": r"\btook (?:a |an |this |that |these |those |the |some |my )?(?:pic|pics|photo|photos|picture|"
    r"pictures|shot|shots|selfie|nap|break|shower|bath|look|while|minute|second|moment|bus|train|"
    r"tube|taxi|cab|it|this|that)\b",
    "tried": r"\btried (?:to|it|that|this|again|hard|my best)\b",
}

# Nouns that make "I have a <noun> <date>" or "my <noun> is on <date>" a plan.
PLAN_NOUNS = frozenset(
    """
    appointment interview flight exam test wedding defence defense surgery operation
    party trip holiday vacation conference meeting presentation concert gig match race
    marathon deadline launch date dinner reunion ceremony graduation hearing viva checkup
    check-up
    """.split()
)

# The verbs a standing instruction starts with ("always answer in Spanish",
# "from now on, keep it short"): "Always good to hear" is no instruction.
IMPERATIVES = frozenset(
    """
    answer reply respond use write give show include cite keep call address ask assume remind
    format tell mention recommend suggest share double-check check start end put add make be
    talk speak explain translate send sign skip avoid provide list summarise summarize spell
    refer greet let offer confirm wait consider treat stop quote link round convert measure
    prefer default stick wrap return label number sort order mark flag note warn leave
    don't do """.split()
)
