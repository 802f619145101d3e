"""The memory-quality scenarios (issue 11): multi-session conversations and what
Engram must know afterwards, read back through the HTTP API only.

Each user turn lists the facts a good LLM reads in it (they script the fake
LLM); the rule-based runs must reach the same state from the text alone. Turns
are dated in 2025 so every valid_from is exact to the day; "T0" is always the
instant before the scenario's first turn."""

from __future__ import annotations

from tests.quality.dsl import (
    Chain,
    Context,
    Core,
    F,
    Facts,
    Mark,
    NoFacts,
    Recall,
    Scenario,
    W,
    Write,
    bot,
    in_order,
    say,
)


def works(org: str, *, subject: str = "user", valid_from: str | None = None, **kw) -> F:  # type: ignore[no-untyped-def]
    who = "User" if subject == "user" else subject
    return F(f"{who} works at {org}", "works_at", org, subject, valid_from=valid_from, **kw)


def lives(city: str, *, subject: str = "user", valid_from: str | None = None, **kw) -> F:  # type: ignore[no-untyped-def]
    who = "User" if subject == "user" else subject
    return F(f"{who} lives in {city}", "lives_in", city, subject, valid_from=valid_from, **kw)


def left(predicate: str, obj: str, text: str, *, valid_from: str | None = None) -> F:
    return F(text, predicate, obj, retract=True, valid_from=valid_from, importance=0.7)


SCENARIOS: list[Scenario] = [
    # --- knowledge updates: jobs ---------------------------------------------------------
    Scenario(
        "job_change",
        "A new employer supersedes the old one, dated by the turn that says so.",
        (
            say(
                "s1",
                "2025-01-10",
                "I work at Siemens, mostly on rail signalling.",
                works("Siemens"),
            ),
            say("s1", "2025-01-10", "It's a long commute but the team is great."),
            say(
                "s2",
                "2025-06-02",
                "Big news: I started at Bosch this week!",
                works("Bosch", valid_from="2025-06-02"),
            ),
            Facts(predicate="works_at", objects=("Bosch",), since={"Bosch": "2025-06-02"}),
            Chain(
                "user",
                "works_at",
                (W("Bosch", "2025-06-02"), W("Siemens", "2025-01-10", "2025-06-02")),
            ),
            Recall(
                "where does the user work, Siemens or Bosch?",
                current=("Bosch",),
                stale=("Siemens",),
                types=("fact",),
            ),
            Recall(
                "Siemens Bosch employer",
                current=("Bosch",),
                stale=("Siemens",),
                replaced=(("Siemens", "Bosch"),),
                include_history=True,
                types=("fact",),
            ),
            Core(has=("Bosch",), lacks=("Siemens",)),
            Context(
                "Siemens or Bosch?",
                current=("Bosch",),
                not_current=("Siemens",),
                history=(("Siemens", "2025-06-02"),),
            ),
        ),
    ),
    Scenario(
        "job_quit_retraction",
        "'I quit X' ends the job at the date the turn gives; nothing is current after.",
        (
            say("s1", "2025-02-03", "I work at Deloitte in the audit practice.", works("Deloitte")),
            Core(has=("Deloitte",)),
            say(
                "s2",
                "2025-08-20",
                "I quit Deloitte last week, taking a break before the next thing.",
                left(
                    "works_at",
                    "Deloitte",
                    "User no longer works at Deloitte",
                    valid_from="2025-08-13",
                ),
            ),
            Facts(predicate="works_at", objects=()),
            Chain("user", "works_at", (W("Deloitte", "2025-02-03", ("2025-08-13", "2025-08-20")),)),
            Facts(predicate="works_at", objects=("Deloitte",), as_of="2025-05-01"),
            Core(lacks=("Deloitte",)),
            Context("Deloitte audit job", not_current=("Deloitte",)),
            Recall("Deloitte", include_history=True, stale=("Deloitte",), types=("fact",)),
            Recall("Deloitte", absent=("User works at Deloitte",), types=("fact",)),
        ),
    ),
    Scenario(
        "no_longer_work_at",
        "'I no longer work at X' retracts the employer; the role stays.",
        (
            say(
                "s1",
                "2025-03-12",
                "I'm a pharmacist at Boots.",
                F("User is a pharmacist", "role", "pharmacist"),
                works("Boots"),
            ),
            say(
                "s2",
                "2025-09-30",
                "I no longer work at Boots.",
                left("works_at", "Boots", "User no longer works at Boots"),
            ),
            Facts(predicate="works_at", objects=()),
            Facts(predicate="role", objects=("pharmacist",)),
            Chain("user", "works_at", (W("Boots", "2025-03-12", "2025-09-30"),)),
            Core(lacks=("Boots",)),
        ),
    ),
    Scenario(
        "thats_no_longer_true",
        "'That's no longer true' answers the assistant's question about the manager.",
        (
            say(
                "s1",
                "2025-01-15",
                "My manager is Priya. She runs the design team.",
                F("User's manager is Priya", "manager", "Priya"),
            ),
            bot("s2", "2025-05-05", "Is Priya still your manager?"),
            say(
                "s2",
                "2025-05-05",
                "That's no longer true, she moved to another team.",
                left("manager", "Priya", "Priya is no longer the user's manager"),
            ),
            Facts(predicate="manager", objects=()),
            Chain("user", "manager", (W("Priya", "2025-01-15", "2025-05-05"),)),
        ),
    ),
    Scenario(
        "manager_meera_daniel",
        "'My manager is Meera now, Daniel left': Meera current, Daniel history.",
        (
            say(
                "s1",
                "2025-01-15",
                "My manager is Daniel. Weekly one-on-ones on Mondays.",
                F("User's manager is Daniel", "manager", "Daniel"),
            ),
            say(
                "s2",
                "2025-04-01",
                "My manager is Meera now, Daniel left.",
                F("User's manager is Meera", "manager", "Meera"),
            ),
            Facts(predicate="manager", objects=("Meera",)),
            Chain(
                "user",
                "manager",
                (W("Meera", "2025-04-01"), W("Daniel", "2025-01-15", "2025-04-01")),
            ),
            Context(
                "who is my manager, Daniel or Meera?", current=("Meera",), not_current=("Daniel",)
            ),
        ),
    ),
    Scenario(
        "new_manager_phrase",
        "'I have a new manager, Hannah' replaces Carl.",
        (
            say(
                "s1",
                "2025-02-17",
                "My manager is Carl, he's very hands-off.",
                F("User's manager is Carl", "manager", "Carl"),
            ),
            say(
                "s2",
                "2025-07-07",
                "I have a new manager, Hannah.",
                F("User's manager is Hannah", "manager", "Hannah"),
            ),
            Facts(predicate="manager", objects=("Hannah",)),
            Chain(
                "user",
                "manager",
                (W("Hannah", "2025-07-07"), W("Carl", "2025-02-17", "2025-07-07")),
            ),
        ),
    ),
    Scenario(
        "partner_change",
        "A new partner supersedes the previous one.",
        (
            say(
                "s1",
                "2025-02-14",
                "My partner is Chloe. Valentine's dinner tonight!",
                F("User's partner is Chloe", "partner", "Chloe"),
            ),
            say(
                "s2",
                "2025-10-01",
                "We broke up over the summer. My partner is Jonas now.",
                F("User's partner is Jonas", "partner", "Jonas"),
            ),
            Facts(predicate="partner", objects=("Jonas",)),
            Chain(
                "user",
                "partner",
                (W("Jonas", "2025-10-01"), W("Chloe", "2025-02-14", "2025-10-01")),
            ),
        ),
    ),
    Scenario(
        "role_promotion_same_employer",
        "A promotion changes the role; the employer is restated, not duplicated.",
        (
            say(
                "s1",
                "2025-01-20",
                "I'm a data analyst at Zalando.",
                F("User is a data analyst", "role", "data analyst"),
                works("Zalando"),
            ),
            say(
                "s2",
                "2025-09-01",
                "Got promoted! I'm a product manager at Zalando.",
                F("User is a product manager", "role", "product manager"),
                works("Zalando"),
            ),
            Facts(predicate="role", objects=("product manager",)),
            Chain(
                "user",
                "role",
                (W("product manager", "2025-09-01"), W("data analyst", "2025-01-20", "2025-09-01")),
            ),
            Chain("user", "works_at", (W("Zalando", "2025-01-20"),)),
        ),
    ),
    Scenario(
        "not_a_teacher_anymore",
        "'I'm not a teacher anymore' ends the role.",
        (
            say(
                "s1",
                "2025-03-03",
                "I'm a teacher. Year five, mostly maths.",
                F("User is a teacher", "role", "teacher"),
            ),
            say(
                "s2",
                "2025-11-11",
                "I'm not a teacher anymore.",
                left("role", "teacher", "User is no longer a teacher"),
            ),
            Facts(predicate="role", objects=()),
            Chain("user", "role", (W("teacher", "2025-03-03", "2025-11-11"),)),
            Core(lacks=("teacher",)),
        ),
    ),
    Scenario(
        "quit_then_new_job_gap",
        "Left Nokia in March, joined Ericsson in May: nothing current in April.",
        (
            say("s1", "2025-01-08", "I work at Nokia. Network software, mostly.", works("Nokia")),
            say(
                "s2",
                "2025-04-10",
                "I left Nokia in March. Needed a change.",
                left("works_at", "Nokia", "User no longer works at Nokia", valid_from="2025-03-01"),
            ),
            say(
                "s3",
                "2025-05-20",
                "I joined Ericsson on May 5th.",
                works("Ericsson", valid_from="2025-05-05"),
            ),
            Facts(predicate="works_at", objects=("Ericsson",)),
            Chain(
                "user",
                "works_at",
                (W("Ericsson", "2025-05-05"), W("Nokia", "2025-01-08", "2025-03-01")),
            ),
            Facts(predicate="works_at", objects=(), as_of="2025-04-01"),
            Facts(predicate="works_at", objects=("Nokia",), as_of="2025-02-01"),
        ),
    ),
    # --- moves -----------------------------------------------------------------------------
    Scenario(
        "move_last_month",
        "'We moved to Denver last month' dates the move a month before the turn.",
        (
            say("s1", "2025-01-05", "I live in Austin. The summers are brutal.", lives("Austin")),
            say(
                "s2",
                "2025-05-15",
                "We moved to Denver last month, still unpacking boxes.",
                lives("Denver", valid_from="2025-04-15"),
            ),
            Facts(predicate="lives_in", objects=("Denver",)),
            Chain(
                "user",
                "lives_in",
                (
                    W("Denver", ("2025-04-15", "2025-04-01")),
                    W("Austin", "2025-01-05", ("2025-04-15", "2025-04-01")),
                ),
            ),
            Facts(predicate="lives_in", objects=("Austin",), as_of="2025-03-01"),
            Facts(predicate="lives_in", objects=("Denver",), as_of="2025-05-01"),
            Facts(predicate="lives_in", objects=(), as_of="2024-12-01"),
        ),
    ),
    Scenario(
        "move_on_named_day",
        "'I moved to Utrecht on July 1st', said on July 20th: valid from July 1st.",
        (
            say(
                "s1",
                "2025-02-10",
                "I'm based in Rotterdam. Cycling everywhere.",
                lives("Rotterdam"),
            ),
            say(
                "s2",
                "2025-07-20",
                "I moved to Utrecht on July 1st.",
                lives("Utrecht", valid_from="2025-07-01"),
            ),
            Chain(
                "user",
                "lives_in",
                (W("Utrecht", "2025-07-01"), W("Rotterdam", "2025-02-10", "2025-07-01")),
            ),
            Facts(predicate="lives_in", objects=("Utrecht",), as_of="2025-07-10"),
            Facts(predicate="lives_in", objects=("Rotterdam",), as_of="2025-06-30"),
        ),
    ),
    Scenario(
        "hamburg_munich_context",
        "After a move /context shows the new city as current, the old one only as history.",
        (
            say("s1", "2025-03-01", "I live in Hamburg, near the harbour.", lives("Hamburg")),
            say("s2", "2025-06-20", "I've moved to Munich for the new job.", lives("Munich")),
            Context(
                "Hamburg or Munich, where do I live?",
                current=("Munich",),
                not_current=("Hamburg",),
                history=(("Hamburg", "2025-06-20"),),
            ),
            Context("where do I live", current=("Munich",), not_current=("Hamburg",)),
            Recall(
                "live Hamburg Munich",
                current=("Munich",),
                stale_turns=("I live in Hamburg",),
                fresh_turns=("moved to Munich",),
                above=(("User lives in Munich", "I live in Hamburg"),),
            ),
            Context(
                "Hamburg or Munich?",
                as_of="2025-04-01",
                current=("Hamburg",),
                not_current=("Munich",),
            ),
        ),
    ),
    Scenario(
        "move_back_home",
        "Lisbon, then Madrid, then back to Lisbon: three windows, the last one current.",
        (
            say("s1", "2025-01-12", "I live in Lisbon. The hills are killing me.", lives("Lisbon")),
            say(
                "s2",
                "2025-04-02",
                "I moved to Madrid on April 1st.",
                lives("Madrid", valid_from="2025-04-01"),
            ),
            say(
                "s3",
                "2025-09-15",
                "I moved back to Lisbon on September 1st, missed the sea.",
                lives("Lisbon", valid_from="2025-09-01"),
            ),
            Facts(predicate="lives_in", objects=("Lisbon",), since={"Lisbon": "2025-09-01"}),
            Chain(
                "user",
                "lives_in",
                (
                    W("Lisbon", "2025-09-01"),
                    W("Madrid", "2025-04-01", "2025-09-01"),
                    W("Lisbon", "2025-01-12", "2025-04-01"),
                ),
            ),
            Facts(predicate="lives_in", objects=("Madrid",), as_of="2025-06-01"),
        ),
    ),
    Scenario(
        "move_keeps_job",
        "Moving changes the city only; the employer stays with its first date.",
        (
            say(
                "s1",
                "2025-02-02",
                "I live in Seattle and I work at Amazon.",
                lives("Seattle"),
                works("Amazon"),
            ),
            say(
                "s2",
                "2025-08-08",
                "I moved to Portland but I still work at Amazon.",
                lives("Portland"),
                works("Amazon"),
            ),
            Facts(predicate="lives_in", objects=("Portland",)),
            Chain("user", "works_at", (W("Amazon", "2025-02-02"),)),
            Chain(
                "user",
                "lives_in",
                (W("Portland", "2025-08-08"), W("Seattle", "2025-02-02", "2025-08-08")),
            ),
        ),
    ),
    Scenario(
        "dont_live_there_anymore",
        "'I don't live in Ghent anymore' retracts the city without naming a new one.",
        (
            say("s1", "2025-03-01", "I live in Ghent. Lovely canals here.", lives("Ghent")),
            say(
                "s2",
                "2025-09-10",
                "I don't live in Ghent anymore.",
                left("lives_in", "Ghent", "User no longer lives in Ghent"),
            ),
            Facts(predicate="lives_in", objects=()),
            Chain("user", "lives_in", (W("Ghent", "2025-03-01", "2025-09-10"),)),
            Context("Ghent", not_current=("Ghent",)),
            Recall(
                "Ghent",
                stale_turns=("I live in Ghent",),
                fresh_turns=("I don't live in Ghent anymore",),
            ),
        ),
    ),
    # --- identity: names, nicknames, third person ------------------------------------
    Scenario(
        "nickname_keeps_name",
        "'Everyone calls me Sam' adds a nickname; the name stays Samantha Reyes.",
        (
            say(
                "s1",
                "2025-03-03",
                "My name is Samantha Reyes.",
                F("User's name is Samantha Reyes", "name", "Samantha Reyes", importance=0.95),
            ),
            say(
                "s2",
                "2025-03-20",
                "Everyone calls me Sam, by the way.",
                F("User goes by Sam", "nickname", "Sam"),
            ),
            Facts(predicate="name", objects=("Samantha Reyes",)),
            Facts(predicate="nickname", objects=("Sam",)),
            Facts(
                subject="Sam", predicate="name", objects=("Samantha Reyes",), answer_subject="user"
            ),
            Chain("user", "name", (W("Samantha Reyes", "2025-03-03"),)),
            Core(has=("Samantha Reyes",)),
        ),
    ),
    Scenario(
        "call_me_then_third_person",
        "'Call me Bobby', then 'Bobby works at BP now' supersedes the user's Shell.",
        (
            say(
                "s1",
                "2025-01-06",
                "My name is Robert Okafor.",
                F("User's name is Robert Okafor", "name", "Robert Okafor", importance=0.95),
            ),
            say(
                "s1",
                "2025-01-06",
                "Call me Bobby, everyone does.",
                F("User goes by Bobby", "nickname", "Bobby"),
            ),
            say("s2", "2025-02-11", "I work at Shell. Trading desk, long hours.", works("Shell")),
            say(
                "s3",
                "2025-10-02",
                "Bobby works at BP now. New chapter for me.",
                works("BP", subject="Bobby"),
            ),
            Facts(predicate="works_at", objects=("BP",)),
            Facts(subject="Bobby", predicate="works_at", objects=("BP",), answer_subject="user"),
            Facts(predicate="name", objects=("Robert Okafor",)),
            Chain(
                "user", "works_at", (W("BP", "2025-10-02"), W("Shell", "2025-02-11", "2025-10-02"))
            ),
        ),
    ),
    Scenario(
        "own_name_third_person",
        "'Maria works at Bosch now' (the user is Maria) supersedes 'works at Siemens'.",
        (
            say(
                "s1",
                "2025-01-20",
                "My name is Maria Lopez and I work at Siemens.",
                F("User's name is Maria Lopez", "name", "Maria Lopez", importance=0.95),
                works("Siemens"),
            ),
            say("s2", "2025-09-01", "Maria works at Bosch now.", works("Bosch", subject="Maria")),
            Facts(predicate="works_at", objects=("Bosch",)),
            Facts(subject="Maria", predicate="works_at", objects=("Bosch",), answer_subject="user"),
            Facts(
                subject="maria lopez",
                predicate="name",
                objects=("Maria Lopez",),
                answer_subject="user",
            ),
            Chain(
                "user",
                "works_at",
                (W("Bosch", "2025-09-01"), W("Siemens", "2025-01-20", "2025-09-01")),
            ),
            Core(has=("Bosch",), lacks=("Siemens",)),
        ),
    ),
    Scenario(
        "own_name_move",
        "'Kenji lives in Osaka now' (the user is Kenji) supersedes Tokyo.",
        (
            say(
                "s1",
                "2025-02-01",
                "My name is Kenji Sato. Nice to meet you.",
                F("User's name is Kenji Sato", "name", "Kenji Sato", importance=0.95),
            ),
            say("s2", "2025-02-03", "I live in Tokyo. Tiny flat, great ramen.", lives("Tokyo")),
            say("s3", "2025-08-19", "Kenji lives in Osaka now.", lives("Osaka", subject="Kenji")),
            Chain(
                "user",
                "lives_in",
                (W("Osaka", "2025-08-19"), W("Tokyo", "2025-02-03", "2025-08-19")),
            ),
            Facts(subject="kenji", predicate="lives_in", objects=("Osaka",), answer_subject="user"),
        ),
    ),
    Scenario(
        "name_change",
        "A new surname supersedes the old name; it is not a second name.",
        (
            say(
                "s1",
                "2025-01-03",
                "My name is Julia Weber. Hello there.",
                F("User's name is Julia Weber", "name", "Julia Weber", importance=0.95),
            ),
            say(
                "s2",
                "2025-06-28",
                "I got married last weekend! My name is Julia Schmidt now.",
                F("User's name is Julia Schmidt", "name", "Julia Schmidt", importance=0.95),
            ),
            Facts(predicate="name", objects=("Julia Schmidt",)),
            Chain(
                "user",
                "name",
                (W("Julia Schmidt", "2025-06-28"), W("Julia Weber", "2025-01-03", "2025-06-28")),
            ),
            Core(has=("Julia Schmidt",), lacks=("Julia Weber",)),
        ),
    ),
    # --- relatives and other people -----------------------------------------------------
    Scenario(
        "sister_anna_moves",
        "'My sister Anna lives in Porto', then 'Anna just moved to Lyon': Anna's city, not the user's.",
        (
            say(
                "s1",
                "2025-02-01",
                "My sister Anna lives in Porto.",
                F("User's sister is Anna", "sister", "Anna"),
                lives("Porto", subject="Anna", importance=0.6),
            ),
            say(
                "s2",
                "2025-06-10",
                "Anna just moved to Lyon.",
                lives("Lyon", subject="Anna", importance=0.6),
            ),
            Chain(
                "Anna",
                "lives_in",
                (W("Lyon", "2025-06-10"), W("Porto", "2025-02-01", "2025-06-10")),
            ),
            Facts(subject="anna", predicate="lives_in", objects=("Lyon",), answer_subject="Anna"),
            Facts(predicate="sister", objects=("Anna",)),
            Facts(predicate="lives_in", objects=()),
        ),
    ),
    Scenario(
        "my_sister_linked",
        "Once 'my sister is called Lena', 'my sister lives in Vienna' is a fact about Lena.",
        (
            say(
                "s1",
                "2025-01-19",
                "My sister is called Lena.",
                F("User's sister is Lena", "sister", "Lena"),
            ),
            say(
                "s2",
                "2025-04-04",
                "My sister lives in Vienna these days.",
                lives("Vienna", subject="Lena", importance=0.6),
            ),
            say(
                "s3",
                "2025-10-12",
                "My sister moved to Graz on October 1st.",
                lives("Graz", subject="Lena", valid_from="2025-10-01", importance=0.6),
            ),
            Chain(
                "Lena",
                "lives_in",
                (W("Graz", "2025-10-01"), W("Vienna", "2025-04-04", "2025-10-01")),
            ),
            Facts(predicate="lives_in", objects=()),
        ),
    ),
    Scenario(
        "my_sister_by_apposition",
        "'My sister Noor lives in Cairo' links 'my sister' to Noor: 'my sister moved' is Noor's move.",
        (
            say(
                "s1",
                "2025-01-11",
                "My sister Noor lives in Cairo with her two kids.",
                F("User's sister is Noor", "sister", "Noor"),
                lives("Cairo", subject="Noor", importance=0.6),
            ),
            say(
                "s2",
                "2025-03-20",
                "My sister moved to Alexandria on March 3rd, closer to the sea.",
                lives("Alexandria", subject="Noor", valid_from="2025-03-03", importance=0.6),
            ),
            Chain(
                "Noor",
                "lives_in",
                (W("Alexandria", "2025-03-03"), W("Cairo", "2025-01-11", "2025-03-03")),
            ),
            Facts(
                subject="noor", predicate="lives_in", objects=("Alexandria",), answer_subject="Noor"
            ),
            Facts(predicate="lives_in", objects=()),
            Context("Cairo Alexandria", current=("Alexandria",), not_current=("Cairo",)),
        ),
    ),
    Scenario(
        "brother_job_not_mine",
        "Tom's new job supersedes Tom's old one and leaves the user's employer alone.",
        (
            say(
                "s1",
                "2025-03-09",
                "My brother Tom works at Google. I work at Apple.",
                F("User's brother is Tom", "brother", "Tom"),
                works("Google", subject="Tom", importance=0.6),
                works("Apple"),
            ),
            say(
                "s2",
                "2025-07-30",
                "Tom works at Meta now. He seems happy.",
                works("Meta", subject="Tom", importance=0.6),
            ),
            Facts(predicate="works_at", objects=("Apple",)),
            Chain(
                "Tom",
                "works_at",
                (W("Meta", "2025-07-30"), W("Google", "2025-03-09", "2025-07-30")),
            ),
            Chain("user", "works_at", (W("Apple", "2025-03-09"),)),
        ),
    ),
    Scenario(
        "friend_alias_anna_k",
        "'Anna K.' and 'Anna' are one person: her new city supersedes the old.",
        (
            say(
                "s1",
                "2025-03-01",
                "My friend Anna K. lives in Gdansk.",
                F("User's friend is Anna K.", "friend", "Anna K."),
                lives("Gdansk", subject="Anna K.", importance=0.6),
            ),
            say(
                "s2",
                "2025-08-01",
                "Anna lives in Warsaw now.",
                lives("Warsaw", subject="Anna", importance=0.6),
            ),
            Facts(subject="Anna K.", predicate="lives_in", objects=("Warsaw",)),
            Facts(subject="anna", predicate="lives_in", objects=("Warsaw",)),
            Chain(
                "Anna",
                "lives_in",
                (W("Warsaw", "2025-08-01"), W("Gdansk", "2025-03-01", "2025-08-01")),
            ),
        ),
    ),
    Scenario(
        "relative_retraction",
        "'Ruth doesn't work at the library anymore' ends Ruth's job, not the user's.",
        (
            say(
                "s1",
                "2025-02-02",
                "My mom Ruth works at the city library. I work at Aldi.",
                F("User's mom is Ruth", "mom", "Ruth"),
                works("the city library", subject="Ruth", importance=0.6),
                works("Aldi"),
            ),
            say(
                "s2",
                "2025-09-15",
                "Ruth doesn't work at the city library anymore, she retired.",
                F(
                    "Ruth no longer works at the city library",
                    "works_at",
                    "the city library",
                    "Ruth",
                    retract=True,
                    importance=0.6,
                ),
            ),
            Facts(subject="Ruth", predicate="works_at", objects=()),
            Chain("Ruth", "works_at", (W("the city library", "2025-02-02", "2025-09-15"),)),
            Chain("user", "works_at", (W("Aldi", "2025-02-02"),)),
            Facts(predicate="mom", objects=("Ruth",)),
        ),
    ),
    Scenario(
        "husband_role_change",
        "The husband's job title changes; the user's own role is untouched.",
        (
            say(
                "s1",
                "2025-02-20",
                "I'm a radiologist. My husband Omar works at Philips.",
                F("User is a radiologist", "role", "radiologist"),
                F("User's husband is Omar", "husband", "Omar"),
                works("Philips", subject="Omar", importance=0.6),
            ),
            say(
                "s2",
                "2025-09-09",
                "Omar works at ASML now, much shorter drive.",
                works("ASML", subject="Omar", importance=0.6),
            ),
            Chain(
                "Omar",
                "works_at",
                (W("ASML", "2025-09-09"), W("Philips", "2025-02-20", "2025-09-09")),
            ),
            Facts(predicate="role", objects=("radiologist",)),
            Facts(predicate="husband", objects=("Omar",)),
        ),
    ),
    # --- out-of-order backfills ---------------------------------------------------------
    Scenario(
        "backfill_job",
        "The newer turn arrives first; the older one becomes history, dated as said.",
        (
            say(
                "s2",
                "2025-09-01",
                "I work at Stripe now. Payments infrastructure.",
                works("Stripe"),
            ),
            Mark("T1"),
            say("s1", "2025-02-01", "I work at Adyen. The office is by the canal.", works("Adyen")),
            Mark("T2"),
            Facts(predicate="works_at", objects=("Stripe",)),
            Chain(
                "user",
                "works_at",
                (W("Stripe", "2025-09-01"), W("Adyen", "2025-02-01", "2025-09-01")),
            ),
            Facts(predicate="works_at", objects=("Adyen",), as_of="2025-05-01"),
            Facts(predicate="works_at", objects=(), as_of="2025-05-01", known_at="T1"),
            Facts(predicate="works_at", objects=("Stripe",), known_at="T1"),
            Core(has=("Stripe",), lacks=("Adyen",)),
        ),
    ),
    Scenario(
        "backfill_three_cities",
        "Three moves arrive newest, oldest, middle: the chain is the in-order chain.",
        (
            say(
                "s3", "2025-08-10", "I moved to Trondheim. It is dark all day.", lives("Trondheim")
            ),
            say("s1", "2025-01-10", "I live in Oslo. Skiing on the weekends.", lives("Oslo")),
            say("s2", "2025-04-10", "I moved to Bergen. It rains a lot.", lives("Bergen")),
            Facts(predicate="lives_in", objects=("Trondheim",)),
            Chain(
                "user",
                "lives_in",
                (
                    W("Trondheim", "2025-08-10"),
                    W("Bergen", "2025-04-10", "2025-08-10"),
                    W("Oslo", "2025-01-10", "2025-04-10"),
                ),
            ),
            Facts(predicate="lives_in", objects=("Bergen",), as_of="2025-06-01"),
            Facts(predicate="lives_in", objects=("Oslo",), as_of="2025-02-01"),
            Context(
                "Oslo Bergen Trondheim", current=("Trondheim",), not_current=("Oslo", "Bergen")
            ),
        ),
    ),
    Scenario(
        "backfill_import_batch",
        "An imported history in one batch, shuffled: roles chain by their dates.",
        (
            say(
                "import",
                "2025-01-15",
                "I'm a senior developer now.",
                F("User is a senior developer", "role", "senior developer"),
            ),
            say(
                "import",
                "2025-07-01",
                "I'm a tech lead now. Six people report to me.",
                F("User is a tech lead", "role", "tech lead"),
            ),
            say(
                "import",
                "2024-03-01",
                "I'm a junior developer. Still learning a lot.",
                F("User is a junior developer", "role", "junior developer"),
            ),
            Facts(predicate="role", objects=("tech lead",)),
            Chain(
                "user",
                "role",
                (
                    W("tech lead", "2025-07-01"),
                    W("senior developer", "2025-01-15", "2025-07-01"),
                    W("junior developer", "2024-03-01", "2025-01-15"),
                ),
            ),
            Facts(predicate="role", objects=("junior developer",), as_of="2024-06-01"),
        ),
    ),
    Scenario(
        "backfill_retraction",
        "A retraction arrives before the fact it retracts was backfilled: the fact is history.",
        (
            say(
                "s2",
                "2025-06-30",
                "I don't live in Basel anymore.",
                left("lives_in", "Basel", "User no longer lives in Basel"),
            ),
            say("s1", "2025-01-04", "I live in Basel. Close to the Rhine.", lives("Basel")),
            Facts(predicate="lives_in", objects=()),
            Facts(predicate="lives_in", objects=("Basel",), as_of="2025-03-01"),
            Chain("user", "lives_in", (W("Basel", "2025-01-04", "2025-06-30"),)),
        ),
    ),
    # --- as_of and known_at ---------------------------------------------------------------
    Scenario(
        "as_of_before_between_after",
        "Valid time: before the first job, during it, after the change.",
        (
            say(
                "s1",
                "2025-01-10",
                "I joined Spotify on November 4, 2024.",
                works("Spotify", valid_from="2024-11-04"),
            ),
            say(
                "s2",
                "2025-06-16",
                "I work at Klarna now. Different pace entirely.",
                works("Klarna"),
            ),
            Facts(predicate="works_at", objects=(), as_of="2024-10-01"),
            Facts(predicate="works_at", objects=("Spotify",), as_of="2024-12-01"),
            Facts(predicate="works_at", objects=("Spotify",), as_of="2025-06-15"),
            Facts(predicate="works_at", objects=("Klarna",), as_of="2025-06-17"),
            Facts(predicate="works_at", objects=("Klarna",), as_of="2026-01-01"),
            Recall(
                "Spotify Klarna",
                as_of="2025-03-01",
                current=("Spotify",),
                stale=("Klarna",),
                types=("fact",),
            ),
            Recall(
                "where did I work, Spotify or Klarna?",
                as_of="2025-03-01",
                current=("Spotify",),
                absent=("I work at Klarna now",),
            ),
            Chain(
                "user",
                "works_at",
                (W("Klarna", "2025-06-16"), W("Spotify", "2024-11-04", "2025-06-16")),
            ),
        ),
    ),
    Scenario(
        "known_at_before_between_after",
        "Transaction time: what Engram knew before, between and after the two writes.",
        (
            say("s1", "2025-02-01", "I live in Leeds. Cold but friendly.", lives("Leeds")),
            Mark("T1"),
            say("s2", "2025-05-01", "I moved to York. The walls are gorgeous.", lives("York")),
            Mark("T2"),
            Facts(predicate="lives_in", objects=(), known_at="T0"),
            Facts(predicate="lives_in", objects=("Leeds",), known_at="T1"),
            Facts(predicate="lives_in", objects=("York",), known_at="T2"),
            Facts(predicate="lives_in", objects=("Leeds",), known_at="T1", as_of="2025-06-01"),
            Facts(predicate="lives_in", objects=("York",), as_of="2025-06-01"),
            Chain("user", "lives_in", (W("Leeds", "2025-02-01"),), known_at="T1"),
            Chain(
                "user",
                "lives_in",
                (W("York", "2025-05-01"), W("Leeds", "2025-02-01", "2025-05-01")),
            ),
            Recall("Leeds York", known_at="T1", current=("Leeds",), absent=("York",)),
            Context("Leeds or York?", known_at="T1", current=("Leeds",), absent=("York",)),
        ),
    ),
    Scenario(
        "known_at_retraction",
        "Before the retraction was learned the job was current; after, it is not.",
        (
            say("s1", "2025-03-03", "I work at Ikea, in the Malmö office.", works("Ikea")),
            Mark("T1"),
            say(
                "s2",
                "2025-10-10",
                "I left Ikea yesterday. Bittersweet goodbye.",
                left("works_at", "Ikea", "User no longer works at Ikea", valid_from="2025-10-09"),
            ),
            Mark("T2"),
            Facts(predicate="works_at", objects=("Ikea",), known_at="T1"),
            Facts(predicate="works_at", objects=(), known_at="T2"),
            Facts(predicate="works_at", objects=("Ikea",), known_at="T1", as_of="2025-12-01"),
            Facts(predicate="works_at", objects=("Ikea",), as_of="2025-10-01"),
            Chain("user", "works_at", (W("Ikea", "2025-03-03", ("2025-10-09", "2025-10-10")),)),
            Chain("user", "works_at", (W("Ikea", "2025-03-03"),), known_at="T1"),
        ),
    ),
    Scenario(
        "known_at_three_writes",
        "Three favourite bands, a mark after each: every mark sees its own answer.",
        (
            say(
                "s1",
                "2025-01-01",
                "My favorite band is Radiohead.",
                F(
                    "User's favorite band is Radiohead",
                    "favorite_band",
                    "Radiohead",
                    kind="preference",
                ),
            ),
            Mark("T1"),
            say(
                "s2",
                "2025-04-01",
                "My favorite band is Muse these days.",
                F("User's favorite band is Muse", "favorite_band", "Muse", kind="preference"),
            ),
            Mark("T2"),
            say(
                "s3",
                "2025-08-01",
                "My favorite band is Blur now, don't judge.",
                F("User's favorite band is Blur", "favorite_band", "Blur", kind="preference"),
            ),
            Mark("T3"),
            Facts(predicate="favorite_band", objects=("Radiohead",), known_at="T1"),
            Facts(predicate="favorite_band", objects=("Muse",), known_at="T2"),
            Facts(predicate="favorite_band", objects=("Blur",), known_at="T3"),
            Facts(
                predicate="favorite_band", objects=("Radiohead",), known_at="T3", as_of="2025-02-01"
            ),
            Facts(predicate="favorite_band", objects=("Muse",), known_at="T2", as_of="2025-12-01"),
            Chain(
                "user",
                "favorite_band",
                (W("Muse", "2025-04-01"), W("Radiohead", "2025-01-01", "2025-04-01")),
                known_at="T2",
            ),
            Chain(
                "user",
                "favorite_band",
                (
                    W("Blur", "2025-08-01"),
                    W("Muse", "2025-04-01", "2025-08-01"),
                    W("Radiohead", "2025-01-01", "2025-04-01"),
                ),
            ),
        ),
    ),
    Scenario(
        "include_history_recall",
        "Without include_history only the current fact; with it, the old one too, not current.",
        (
            say(
                "s1",
                "2025-02-02",
                "I'm a student at TU Delft.",
                F("User studies at TU Delft", "studies_at", "TU Delft"),
            ),
            say(
                "s2",
                "2025-09-03",
                "I attend Leiden University now.",
                F("User studies at Leiden University", "studies_at", "Leiden University"),
            ),
            Recall(
                "Delft Leiden university",
                current=("Leiden",),
                absent=("User studies at TU Delft",),
                types=("fact",),
            ),
            Recall(
                "Delft Leiden university",
                path="/memory/search",
                current=("Leiden",),
                stale=("Delft",),
                replaced=(("Delft", "Leiden"),),
                include_history=True,
                types=("fact",),
            ),
            Chain(
                "user",
                "studies_at",
                (W("Leiden University", "2025-09-03"), W("TU Delft", "2025-02-02", "2025-09-03")),
            ),
        ),
    ),
    # --- the assistant's guesses, small talk, questions -----------------------------------
    Scenario(
        "assistant_repeats_old_fact",
        "The assistant asks about the old employer; that revives nothing.",
        (
            say("s1", "2025-01-27", "I work at Unilever on the soap brands.", works("Unilever")),
            say("s2", "2025-05-12", "I work at Danone now, new challenge.", works("Danone")),
            bot(
                "s3",
                "2025-06-01",
                "How are things at Unilever these days? You work at Unilever, right?",
            ),
            say("s3", "2025-06-01", "I told you, I'm at Danone now!", works("Danone")),
            Facts(predicate="works_at", objects=("Danone",), since={"Danone": "2025-05-12"}),
            Chain(
                "user",
                "works_at",
                (W("Danone", "2025-05-12"), W("Unilever", "2025-01-27", "2025-05-12")),
            ),
            Core(has=("Danone",), lacks=("Unilever",)),
        ),
    ),
    Scenario(
        "assistant_guess_city",
        "The assistant's guess 'you live in Paris?' and a 'haha ok' write nothing.",
        (
            bot("s1", "2025-04-04", "I guess you live in Paris? You mentioned croissants."),
            say("s1", "2025-04-04", "haha ok"),
            NoFacts(),
            Context("Paris", not_current=("Paris",)),
        ),
    ),
    Scenario(
        "assistant_guess_then_correction",
        "The assistant guesses Madrid, the user corrects to Valencia: only Valencia is stored.",
        (
            bot("s1", "2025-05-05", "Since you live in Madrid, want some tapas recommendations?"),
            say("s1", "2025-05-05", "Actually I live in Valencia, not Madrid.", lives("Valencia")),
            Facts(predicate="lives_in", objects=("Valencia",)),
            Chain("user", "lives_in", (W("Valencia", "2025-05-05"),)),
            Recall("Madrid", absent=("User lives in Madrid",), types=("fact",)),
        ),
    ),
    Scenario(
        "assistant_guess_role",
        "'I bet you're a software engineer' — 'Nope, I'm a nurse.'",
        (
            bot("s1", "2025-06-06", "I bet you're a software engineer, right?"),
            say(
                "s1",
                "2025-06-06",
                "Nope, I'm a nurse. Night shifts mostly.",
                F("User is a nurse", "role", "nurse"),
            ),
            bot("s2", "2025-06-09", "As a software engineer you might like this article."),
            say("s2", "2025-06-09", "thanks!"),
            Facts(predicate="role", objects=("nurse",)),
            Chain("user", "role", (W("nurse", "2025-06-06"),)),
        ),
    ),
    Scenario(
        "small_talk_only",
        "Three sessions of small talk and questions: no fact at all.",
        (
            say("s1", "2025-01-02", "good morning :)"),
            say("s1", "2025-01-02", "what's the weather like in Oslo tomorrow?"),
            say("s2", "2025-01-05", "haha ok"),
            say("s2", "2025-01-05", "thanks!"),
            say("s3", "2025-01-09", "lol that's funny, tell me another one"),
            say("s3", "2025-01-09", "I'm so tired today."),
            NoFacts(),
            Context("zebra quantum", empty=True),
        ),
    ),
    Scenario(
        "questions_no_facts",
        "Questions about the user's own things are not facts.",
        (
            say("s1", "2025-02-12", "Do you know where I left my keys?"),
            say("s1", "2025-02-12", "Can you remind me what my manager said about the deadline?"),
            say("s2", "2025-02-13", "What's a good name for a cat?"),
            NoFacts(),
        ),
    ),
    Scenario(
        "small_talk_between_facts",
        "Small talk between two facts adds nothing and changes nothing.",
        (
            say("s1", "2025-03-14", "I live in Tartu. Small university town.", lives("Tartu")),
            say("s2", "2025-03-20", "haha ok thanks"),
            say("s2", "2025-03-20", "what's the weather like there?"),
            say(
                "s3",
                "2025-04-01",
                "I'm a big fan of chess. I play online most nights.",
                F("User likes chess", "likes", "chess", kind="preference", importance=0.6),
            ),
            Facts(subject="user", objects=("Tartu", "chess")),
            Chain("user", "lives_in", (W("Tartu", "2025-03-14"),)),
            Context("zebra quantum", empty=True),
        ),
    ),
    Scenario(
        "restatement_keeps_date",
        "Saying it again is a restatement: one fact, first date kept.",
        (
            say("s1", "2025-01-25", "I live in Nantes. Right by the river.", lives("Nantes")),
            say("s2", "2025-07-25", "As I said, I live in Nantes.", lives("Nantes")),
            Chain("user", "lives_in", (W("Nantes", "2025-01-25"),)),
        ),
    ),
    # --- preferences, studies, age -------------------------------------------------------
    Scenario(
        "favorite_food_change",
        "A favourite is single-valued: sushi, then ramen.",
        (
            say(
                "s1",
                "2025-02-08",
                "My favorite food is sushi.",
                F("User's favorite food is sushi", "favorite_food", "sushi", kind="preference"),
            ),
            say(
                "s2",
                "2025-08-08",
                "My favorite food is ramen these days.",
                F("User's favorite food is ramen", "favorite_food", "ramen", kind="preference"),
            ),
            Facts(predicate="favorite_food", objects=("ramen",)),
            Chain(
                "user",
                "favorite_food",
                (W("ramen", "2025-08-08"), W("sushi", "2025-02-08", "2025-08-08")),
            ),
        ),
    ),
    Scenario(
        "dislike_to_like",
        "'I don't like olives' then 'I like olives now': the dislike ends.",
        (
            say(
                "s1",
                "2025-03-03",
                "I don't like olives. Never have, honestly.",
                F("User dislikes olives", "dislikes", "olives", kind="preference", importance=0.6),
            ),
            say(
                "s2",
                "2025-09-09",
                "I like olives now, weirdly.",
                F("User likes olives", "likes", "olives", kind="preference", importance=0.6),
            ),
            Facts(predicate="likes", objects=("olives",)),
            Facts(predicate="dislikes", objects=()),
            Chain("user", "dislikes", (W("olives", "2025-03-03", "2025-09-09"),)),
        ),
    ),
    Scenario(
        "age_update",
        "Age is single-valued.",
        (
            say(
                "s1",
                "2025-01-01",
                "I'm 29 years old. Thirty is coming fast.",
                F("User is 29 years old", "age", "29", importance=0.6),
            ),
            say(
                "s2",
                "2025-12-01",
                "I'm 30 years old now, feeling ancient.",
                F("User is 30 years old", "age", "30", importance=0.6),
            ),
            Facts(predicate="age", objects=("30",)),
            Chain("user", "age", (W("30", "2025-12-01"), W("29", "2025-01-01", "2025-12-01"))),
        ),
    ),
    Scenario(
        "graded_fact_scores",
        "Fact-only recall grades: a fact matching both words beats one matching one.",
        (
            say(
                "s1",
                "2025-05-01",
                "I love hiking in the Dolomites.",
                F(
                    "User likes hiking in the Dolomites",
                    "likes",
                    "hiking in the Dolomites",
                    kind="preference",
                    importance=0.6,
                ),
            ),
            say(
                "s2",
                "2025-05-09",
                "I love hiking, any trail will do.",
                F("User likes hiking", "likes", "hiking", kind="preference", importance=0.6),
            ),
            say(
                "s3",
                "2025-05-20",
                "I really like the food in the Dolomites.",
                F(
                    "User likes the food in the Dolomites",
                    "likes",
                    "the food in the Dolomites",
                    kind="preference",
                    importance=0.6,
                ),
            ),
            Recall(
                "hiking Dolomites",
                types=("fact",),
                graded=True,
                above=(("hiking in the Dolomites", "User likes hiking"),),
                current=("hiking in the Dolomites",),
            ),
        ),
    ),
    # --- explicit writes and the read path ----------------------------------------------------
    Scenario(
        "explicit_write_request_time",
        "POST /memory/facts without valid_from is valid from the request; with it, from that day.",
        (
            Write("User's dentist is Dr. Moreau", predicate="dentist", object="Dr. Moreau"),
            Write(
                "User's gym is FitLab", predicate="gym", object="FitLab", valid_from="2025-03-01"
            ),
            Facts(predicate="dentist", objects=("Dr. Moreau",), since={"Dr. Moreau": "TODAY"}),
            Facts(predicate="gym", objects=("FitLab",), since={"FitLab": "2025-03-01"}),
            Facts(predicate="gym", objects=(), as_of="2025-02-01"),
        ),
    ),
    Scenario(
        "chat_after_explicit_write",
        "A dated chat turn about the same slot as an explicit write: valid time orders them.",
        (
            Write(
                "User lives in Quito", predicate="lives_in", object="Quito", valid_from="2025-01-01"
            ),
            say(
                "s1",
                "2025-06-01",
                "I moved to Cuenca on May 20th.",
                lives("Cuenca", valid_from="2025-05-20"),
            ),
            Facts(predicate="lives_in", objects=("Cuenca",)),
            Chain(
                "user",
                "lives_in",
                (W("Cuenca", "2025-05-20"), W("Quito", "2025-01-01", "2025-05-20")),
            ),
        ),
    ),
    Scenario(
        "short_fact_turns",
        "A short turn can carry a durable fact: 'I live in Leeds.' is not too short to learn.",
        (
            say("s1", "2025-03-03", "I live in Leeds.", lives("Leeds")),
            say("s2", "2025-03-09", "My boss is Ines.", F("User's boss is Ines", "boss", "Ines")),
            say(
                "s3",
                "2025-04-01",
                "I'm 41 years old.",
                F("User is 41 years old", "age", "41", importance=0.6),
            ),
            Facts(predicate="lives_in", objects=("Leeds",)),
            Facts(predicate="boss", objects=("Ines",)),
            Facts(predicate="age", objects=("41",)),
        ),
    ),
    Scenario(
        "context_relevance_gate",
        "/context injects nothing for a query that shares no word with memory.",
        (
            say("s1", "2025-04-12", "I work at Rabobank. Risk modelling team.", works("Rabobank")),
            say("s1", "2025-04-12", "I live in Eindhoven. Nice and quiet.", lives("Eindhoven")),
            say(
                "s1",
                "2025-04-12",
                "My favorite sport is korfball.",
                F(
                    "User's favorite sport is korfball",
                    "favorite_sport",
                    "korfball",
                    kind="preference",
                ),
            ),
            Context("zebra quantum", empty=True),
            Context(
                "korfball",
                current=("korfball",),
                no_line=("I work at Rabobank", "I live in Eindhoven"),
                not_current=("Rabobank", "Eindhoven"),
            ),
        ),
    ),
    Scenario(
        "context_known_at_and_as_of",
        "/context answers as of a past instant and as Engram knew it then.",
        (
            say("s1", "2025-01-15", "I live in Dublin. Rainy but I love it.", lives("Dublin")),
            Mark("T1"),
            say(
                "s2",
                "2025-07-15",
                "I moved to Galway on July 1st.",
                lives("Galway", valid_from="2025-07-01"),
            ),
            Context(
                "Dublin Galway",
                current=("Galway",),
                not_current=("Dublin",),
                history=(("Dublin", "2025-07-01"),),
            ),
            Context(
                "Dublin Galway", as_of="2025-03-01", current=("Dublin",), not_current=("Galway",)
            ),
            Context("Dublin Galway", known_at="T1", current=("Dublin",), absent=("Galway",)),
        ),
        queries=("where do I live now", "Dublin"),
    ),
]

# Every backfill has an in-order twin: the same turns posted in the order they
# were said, held to the same checks (test_backfill_equals_in_order compares
# the two final states too).
SCENARIOS += [in_order(s) for s in list(SCENARIOS) if s.name.startswith("backfill_")]

_names = [s.name for s in SCENARIOS]
assert len(_names) == len(set(_names)), "scenario names must be unique"
