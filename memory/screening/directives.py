"""Instruction-like text: what reads as an attack on the model that will see
stored memory later.

Each rule names a reason. The rules look for text addressed to the model
(override its instructions, change its role, reveal its prompt, hide things
from the user, call its tools, persist a directive into later sessions), not
for words: "ignore", "system", "instructions", "from now on" and shell
snippets are all ordinary in chat. A user speaking about themselves ("from now
on I'll cycle to work") or their own instructions ("ignore my last message")
is not addressed.
"""

from __future__ import annotations

import re

from memory.screening import prefilter
from memory.screening.prefilter import live

_I = re.I | re.S


def _any(*parts: str) -> str:
    return "(?:" + "|".join(parts) + ")"


# --- overriding the model's instructions, in several languages ----------------------------

_EN_IGNORE = _any(
    r"ignore",
    r"disregard",
    r"forget",
    r"override",
    r"bypass",
    r"skip",
    r"discard",
    r"drop",
    r"abandon",
    r"neglect",
    r"dismiss",
    r"overlook",
    r"set\s+aside",
    r"throw\s+(?:away|out)",
    r"pay\s+no\s+(?:attention|heed|mind)\s+to",
    r"(?:do\s+not|don't|dont|never)\s+(?:follow|obey|heed|listen\s+to)",
    r"stop\s+(?:following|obeying|listening\s+to)",
    r"no\s+longer\s+(?:follow|obey)",
    r"scrap",
    r"ditch",
    r"nullify",
    r"void",
    r"cancel",
    r"erase",
    r"wipe",
    r"delete",
    r"ignoring",
    r"disregarding",
    r"supersedes?",
    r"overrides?",
    r"overrules?",
    r"(?:takes?|has|have)\s+(?:precedence|priority)\s+over",
)
_EN_TARGET_ADJ = _any(
    r"previous(?:ly\s+given)?",
    r"prior",
    r"above",
    r"earlier",
    r"preceding",
    r"foregoing",
    r"former",
    r"old",
    r"original",
    r"initial",
    r"existing",
    r"current",
    r"system",
    r"developer",
    r"safety",
    r"security",
    r"ethical",
    r"built[-\s]?in",
    r"hidden",
    r"pre[-\s]?set",
    r"standing",
    r"core",
    r"given",
    r"operator",
)
_EN_DET = _any(
    r"all",
    r"any",
    r"every",
    r"each",
    r"the",
    r"your",
    r"these",
    r"those",
    r"of",
    r"and",
    r"or",
    r"other",
    r",",
)
_EN_NOUN = _any(
    r"instructions?",
    r"prompts?",
    r"rules",
    r"guidelines",
    r"directives?",
    r"commands",
    r"orders",
    r"programming",
    r"constraints",
    r"restrictions",
    r"polic(?:y|ies)",
    r"guardrails",
    r"training",
    r"filters",
    r"safeguards",
    r"protocols",
    r"limitations",
    r"ethics",
    r"system\s+prompt",
    r"system\s+message",
    r"guidance",
    r"directions",
)
_EN_OVERRIDE = [
    # ignore [all] [the] previous instructions  /  disregard your system prompt
    rf"\b{_EN_IGNORE}\s+(?:{_EN_DET}\s+){{0,4}}(?:{_EN_TARGET_ADJ}\s+(?:{_EN_DET}\s+)?){{1,3}}{_EN_NOUN}\b"
    r"(?!\s+(?:I|we)\s+(?:gave|sent|wrote|posted|mentioned|typed|added))",
    # ignore all instructions / ignore your instructions / forget all your rules
    rf"\b{_EN_IGNORE}\s+(?:all|any|every|your)\s+(?:(?:of\s+)?(?:the|your|its)\s+)?(?:{_EN_TARGET_ADJ}\s+)?{_EN_NOUN}\b",
    # forget everything above / disregard all that came before
    rf"\b{_EN_IGNORE}\s+(?:about\s+)?(?:everything|anything|all(?:\s+(?:of\s+)?(?:that|this|the\s+text))?)\s*"
    r"(?:(?:that\s+|which\s+)?(?:was|has\s+been|you\s+(?:were|have\s+been)|came|you\s+read|I\s+said)"
    r"(?:\s+(?:said|told|written|given|stated))?\s+)?(?:above|before|so\s+far|prior|previously|earlier|"
    r"until\s+now|up\s+to\s+(?:now|this\s+point)|you\s+(?:were|have\s+been)\s+told)",
    # your previous instructions are void / the system prompt is cancelled
    rf"\b(?:all|your|the|any)\s+(?:{_EN_TARGET_ADJ}\s+)+{_EN_NOUN}\s+(?:are|is|were|have\s+been)\s+(?:now\s+)?"
    r"(?:void|cancel+ed|null|obsolete|revoked|invalid|overridden|superseded|no\s+longer\s+(?:valid|in\s+effect|apply)|lifted|disabled|suspended|deprecated|replaced)",
    # ignore what you were told earlier / forget whatever you've been given
    rf"\b{_EN_IGNORE}\s+(?:what|whatever|everything|anything|all)\s+(?:\w+\s+){{0,2}}(?:that\s+)?(?:you(?:\s+(?:were|have\s+been|got)|['’]ve\s+been)|was|has\s+been)\s+"
    r"(?:told|given|instructed|asked|said|written|set\s+up\s+with|programmed\s+with)",
    # the guidance you were given no longer applies / everything you've been instructed is cancelled
    r"\b(?:guidance|instructions?|rules|directions|guidelines|prompt|everything|anything)\s+(?:that\s+)?(?:you(?:\s+(?:were|have\s+been|got)|['’]ve\s+been)\s+(?:given|told|instructed|set\s+up\s+with)|given\s+to\s+you)\b"
    r".{0,60}?\b(?:no\s+longer\s+appl(?:y|ies)|(?:is|are)\s+(?:now\s+)?(?:void|cancel+ed|obsolete|revoked|over|invalid|null)|do(?:es)?n't\s+apply|don't\s+count)",
    # don't follow the rules you were set up with
    r"\b(?:do\s+not|don't|dont|stop|no\s+longer)\s+(?:follow|obey|apply|use)(?:ing)?\s+(?:the|your|any)\s+(?:\w+\s+)?(?:rules|instructions|guidelines|guidance|directives)\s+(?:you\s+(?:were|have\s+been|'ve\s+been)|that\s+you\s+(?:were|got))",
    # your instructions are outdated / whatever your rules say, they are void
    r"\b(?:your|the\s+system'?s?|the\s+assistant'?s?)\s+(?:\w+\s+)?(?:instructions|rules|guidelines|directives|prompt|system\s+prompt|programming)\b[^.!?\n]{0,40}?"
    r"\b(?:are|is|were)\s+(?:now\s+|all\s+)?(?:outdated|obsolete|void|invalid|cancel+ed|irrelevant|over|expired|fake|superseded|revoked|wrong|no\s+longer\s+(?:valid|relevant|in\s+effect))",
    # set your earlier directives aside / throw your rules out
    r"\b(?:set|put|push|lay|cast|throw|toss)\s+(?:all\s+)?(?:of\s+)?(?:your|the|any)\s+(?:\w+\s+)?(?:instructions|rules|guidelines|directives|guidance|programming|restrictions)\s+(?:aside|away|out)\b",
    # overwrite/replace your instructions with this
    r"\b(?:overwrite|replace|rewrite|swap)\s+(?:all\s+)?(?:your|the\s+system|the\s+original|your\s+current)\s+(?:instructions|rules|prompt|system\s+prompt|guidelines|directives)\s+with\b",
    # treat everything before this sentence as a draft and disregard it
    r"\b(?:everything|anything|all|the\s+text|whatever)\s+(?:written\s+)?(?:before|above|prior\s+to)\s+(?:this|here|now)\b.{0,60}\b(?:disregard|ignore|forget|void|draft|irrelevant|cancel+ed|doesn't\s+count)",
    # the real instructions follow / the instructions above were a test
    r"\b(?:above|previous|prior|earlier)\s+(?:instructions|text|prompt)\s+(?:was|were)\s+(?:just\s+)?(?:a\s+test|fake|wrong)",
]
# The same attack in other languages: verb + (all) + previous/above + instructions.
_I18N_OVERRIDE = [
    # German
    r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+Sie|missacht(?:e|en)|übergeh(?:e|en)|verwirf|überspring(?:e)?|"
    r"beachte\s+nicht|befolge\s+nicht|setze?\s+(?:alle\s+)?)(?:\s+Sie)?\s+(?:\w+\s+){0,3}"
    r"(?:vorherigen?|bisherigen?|obigen?|vorangegangenen?|früheren?|vorigen?|ursprünglichen?|alten|System-?)"
    r"\s*(?:\w+\s+)?(?:Anweisungen|Instruktionen|Befehle|Regeln|Anordnungen|Vorgaben|Richtlinien|Prompts?|Systemprompts?|Eingaben)",
    r"\b(?:vergiss|ignoriere|vergessen\s+Sie|ignorieren\s+Sie)\s+alles(?:,?\s+was)?\s+(?:\w+\s+){0,3}(?:vorher|davor|oben|bisher|zuvor)",
    r"\b(?:alle\s+)?(?:vorherigen|bisherigen|obigen)\s+(?:Anweisungen|Regeln)\s+(?:sind|gelten)\s+(?:nicht\s+mehr|ungültig|aufgehoben)",
    # French
    r"\b(?:ignor(?:e|ez|er)|oubli(?:e|ez|er)|néglig(?:e|ez)|écart(?:e|ez)|ne\s+(?:tiens|tenez)\s+(?:pas|plus)\s+compte\s+d(?:es|e\s+tes|e\s+vos|e\s+toutes)|"
    r"fais|faites)\s+(?:\w+\s+){0,3}(?:instructions?|consignes?|règles?|directives?|ordres?|prompts?|indications?)"
    r"(?:\s+\w+){0,2}\s*(?:précédentes?|antérieures?|ci-dessus|d'avant|initiales?|originales?|du\s+système|système)",
    r"\b(?:ignor(?:e|ez)|oubli(?:e|ez))\s+(?:\w+\s+){0,2}(?:précédentes?|antérieures?|anciennes)\s+(?:instructions|consignes|règles)",
    r"\b(?:oublie|oubliez|ignore|ignorez)\s+tout\s+(?:ce\s+qui\s+(?:précède|a\s+été\s+dit)|ce\s+que\s+(?:l'on\s+)?(?:t'|vous\s+)?a\s+(?:été\s+)?dit|avant)",
    r"\b(?:ignor(?:e|ez|er)|oubli(?:e|ez|er))\s+(?:toutes\s+)?(?:les|tes|vos)\s+(?:règles|instructions|consignes)\s+(?:qu'on|que\s+l'on|que)\s+(?:t'|vous\s+)?a\s+(?:été\s+)?donn",
    r"\b(?:oublie|oubliez|ignore|ignorez)\s+(?:toutes\s+)?(?:tes|vos)\s+(?:règles|instructions|consignes|directives)\b",
    r"\b(?:vergiss|ignoriere|missachte|vergessen\s+Sie|ignorieren\s+Sie)\s+(?:alle\s+)?(?:deine|Ihre|sämtliche)\s+(?:\w+\s+)?(?:Regeln|Anweisungen|Vorgaben|Instruktionen|Richtlinien)\b",
    r"\b(?:olvida|olvídate\s+de|ignora|olvide|ignore)\s+(?:todas\s+)?(?:tus|sus)\s+(?:reglas|instrucciones|indicaciones|normas)\b",
    r"\b(?:dimentica|ignora)\s+(?:tutte\s+)?(?:le\s+tue|le\s+sue)\s+(?:regole|istruzioni)\b",
    r"\b(?:esqueça|esquece|ignore|ignora)\s+(?:todas\s+)?(?:as\s+suas|suas|as\s+tuas|tuas)\s+(?:regras|instruções)\b",
    # Spanish
    r"\b(?:ignor(?:a|e|en|ad|ar)|olvid(?:a|e|en|ad|ar)|descart(?:a|e)|desobedece|omit(?:e|a)|no\s+(?:sigas|obedezcas|hagas\s+caso\s+(?:a|de))|haz\s+caso\s+omiso\s+(?:a|de))"
    r"\s+(?:\w+\s+){0,3}(?:instrucci[oó]n(?:es)?|indicaci[oó]n(?:es)?|reglas?|[oó]rden(?:es)?|directrices|directriz|normas?|prompts?)"
    r"(?:\s+\w+){0,2}\s*(?:anteriores|anterior|previas?|de\s+arriba|originales|original|iniciales|inicial|del\s+sistema)",
    r"\b(?:olvida|olvide|ignora|ignore)\s+todo\s+(?:lo\s+)?(?:anterior|que\s+(?:te\s+)?(?:dijeron|han\s+dicho|se\s+dijo))",
    # Italian
    r"\b(?:ignora|ignori|ignorate|dimentica|dimentichi|dimenticate|trascura|non\s+seguire)\s+(?:\w+\s+){0,3}"
    r"(?:istruzion[ei]|regol[ae]|direttiv[ae]|indicazion[ei]|ordini)(?:\s+\w+){0,2}\s*(?:precedent[ei]|anterior[ei]|di\s+sistema|original[ei]|inizial[ei]|sopra)",
    # Portuguese
    r"\b(?:ignor(?:e|a|em)|esqueç(?:a|am)|esquece|desconsider(?:e|a)|não\s+sig(?:a|as))\s+(?:\w+\s+){0,3}"
    r"(?:instruç(?:ão|ões)|regras?|diretrizes?|ordens?|orientaç(?:ão|ões))(?:\s+\w+){0,2}\s*(?:anteriores|anterior|prévias?|acima|originais|original|iniciais|inicial|do\s+sistema)",
    # Dutch
    r"\b(?:negeer|vergeet|negeren|vergeten)\s+(?:\w+\s+){0,3}(?:eerdere|vorige|voorgaande|bovenstaande|oorspronkelijke)\s+"
    r"(?:instructies|regels|opdrachten|richtlijnen|aanwijzingen)",
    # Polish
    r"\b(?:zignoruj|ignoruj|zapomnij|pomiń)\s+(?:\w+\s+){0,3}(?:poprzednie|wcześniejsze|powyższe|wszystkie)\s+(?:\w+\s+)?"
    r"(?:instrukcje|polecenia|zasady|reguły|wytyczne)",
    # Russian and Ukrainian
    r"(?:игнорируй|проигнорируй|игнорируйте|забудь|забудьте|не\s+обращай\s+внимания\s+на|отмени|ігноруй|забудь|"
    r"не\s+выполняй|не\s+следуй|не\s+слушай|перестань\s+следовать|не\s+виконуй)\s+"
    r"(?:\w+\s+){0,3}(?:предыдущие|прошлые|прежние|старые|вышеуказанные|все|системные|свои|твои|попередні|усі|всі)\s+(?:\w+\s+)?"
    r"(?:инструкции|указания|правила|команды|инструкций|інструкції|вказівки|правила)",
    # Chinese, Japanese, Korean
    r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|无需理会|跳过)(?:掉)?(?:你)?(?:之前|以上|上面|前面|先前|此前|所有|全部|原来|原有|系统)(?:的)?(?:所有|全部|一切)?(?:的)?(?:指令|指示|说明|规则|提示|要求|命令|设定)",
    r"(?:以前|前|上記|これまで|先ほど)の(?:すべての|全ての|全部の)?(?:指示|命令|ルール|指令|プロンプト)(?:を|は)(?:すべて|全て|全部)?(?:無視|忘れ)",
    r"(?:すべての|全ての)?(?:指示|命令|ルール)を無視",
    r"(?:前|以前|上記|これまで)の(?:指示|命令|ルール).{0,12}無視|無視.{0,12}(?:前|以前|上記|これまで)の(?:指示|命令|ルール)",
    r"(?:忘掉|忘记|忽略|无视)(?:你的)?(?:所有|全部)?(?:的)?(?:规则|指令|指示|设定)",
    r"(?:이전|위의|앞의|모든|기존)\s*(?:모든\s*)?(?:지시|지침|명령|규칙|지시사항)(?:을|를|은|는)?\s*(?:모두|전부|다)?\s*(?:무시|잊어)",
    # Turkish, Arabic, Hindi
    r"(?:önceki|yukarıdaki|tüm|bütün)\s+(?:\w+\s+)?(?:talimatları|kuralları|komutları|yönergeleri)\s+(?:yok\s+say|görmezden\s+gel|unut|dikkate\s+alma)",
    r"(?:تجاهل|انس|تجاهلي|انسى)\s+(?:\S+\s+){0,2}(?:التعليمات|الأوامر|القواعد|الإرشادات)(?:\s+\S+){0,2}",
    r"(?:पिछले|पिछली|सभी|ऊपर\s+के)\s+(?:\S+\s+){0,2}(?:निर्देशों|निर्देश|नियमों)\s+(?:को\s+)?(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)",
]

# --- changing the model's role ------------------------------------------------------------

_AI_NOUN = r"(?:ai|a\.i\.|llm|language\s+model|assistant|chat\s?bot|bot|agent|model|gpt|chatgpt|claude|copilot)"
_FREE = (
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|unchained|unbound|unleashed|evil|rogue|dan|"
    r"free\s+from|without\s+(?:any\s+)?(?:rules|restrictions|limits|filters|guidelines|ethics|morals)|"
    r"no\s+longer\s+(?:bound|restricted|limited)|(?:freed|liberated|released)\s+from|never\s+refuses?|"
    r"(?:has|have|with)\s+no\s+(?:rules|restrictions|limits|filters|guidelines|ethics|content\s+polic(?:y|ies)|safety|moderation|guardrails))"
)
_EN_ROLE = [
    rf"\byou(?:\s+are|'re)\s+(?:now|henceforth|from\s+now\s+on|no\s+longer)\s+(?:an?\s+|the\s+)(?:[\w'\"‘’“”]+\s*,?\s+){{0,3}}?(?:{_FREE}|{_AI_NOUN}|persona|character|version|admin(?:istrator)?|root|developer|owner\s+of\s+(?:this|the)\s+(?:system|assistant)|hacker|villain|mode\b)",
    r"\byou(?:\s+are|'re)\s+(?:now|henceforth|from\s+now\s+on|no\s+longer)\s+(?:[\"'‘“][^\"'’”]{1,30}[\"'’”]|dan\b|[A-Z][a-z]*(?:GPT|Bot|AI)\b)",
    r"\byou\s+are\s+(?:now|henceforth|from\s+now\s+on|no\s+longer)\s+(?:in\s+|called\s+|named\s+|known\s+as\s+|"
    r"operating\s+|running\s+|acting\s+|under\s+|free|unrestricted|unfiltered|jailbroken|dan\b|evil|bound|restricted|required|limited|"
    r"my\s+(?:slave|servant|puppet|tool)|obliged|allowed|permitted|able\s+to\s+ignore)",
    r"\byou(?:'re|\s+are)\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|chatgpt|claude|bound|restricted|limited|required)",
    rf"\b(?:act|behave|respond|answer|reply|roleplay)\s+(?:as\s+if\s+you\s+(?:were|are)\s+|as\s+|like\s+)(?:an?\s+|the\s+)?{_FREE}",
    rf"\b(?:pretend|imagine|suppose|assume|let'?s\s+say)\s+(?:that\s+)?(?:you\s+are|you're|to\s+be|you\s+were)\s+(?:an?\s+)?(?:\w+\s+){{0,3}}{_FREE}",
    rf"\b(?:act|behave|roleplay|role-play|play|pose)\s+(?:as|like)\s+(?:an?\s+|the\s+)?(?:\w+\s+){{0,2}}{_AI_NOUN}\b.{{0,60}}{_FREE}",
    rf"\b(?:from\s+(?:this|that)\s+(?:moment|point)(?:\s+on)?|from\s+now\s+on|as\s+of\s+now|starting\s+now)\s*,?\s*you\s+are\s+.{{0,60}}{_FREE}",
    r"\bpretend\s+(?:that\s+)?(?:you\s+(?:have|had)\s+no|there\s+are\s+no)\s+(?:rules|restrictions|guidelines|filters|limits)",
    r"\b(?:enter|enable|activate|switch\s+(?:on|to|into)|turn\s+on|engage|unlock|go\s+into)\s+(?:the\s+)?"
    r"(?:developer|dev|dan|god|jailbreak|debug|admin|sudo|root|maintenance|unrestricted|unfiltered|evil|super)[-\s]?mode\b"
    # ... not a phone's or a browser's own developer mode
    r"(?!\s+(?:on|in|for|of)\s+(?:your|my|the|a|an|this|his|her)\s+(?!assistant|ai\b|model|chat|bot|self)\w+)",
    r"\b(?:developer|dan|god|jailbreak|sudo|unrestricted)[-\s]mode\s+(?:enabled|activated|on|is\s+(?:now\s+)?(?:on|active|enabled))"
    r"(?!\s+(?:(?:on|in|for)\s+)?(?:your|my|the|a|an|this)\s+(?!assistant|ai\b|model|chat|bot)\w+)",
    r"\byou\s+(?:have|has|now\s+have)\s+no\s+(?:rules|restrictions|limits|guidelines|filters|ethics|policies|boundaries|constraints)",
    rf"\b{_AI_NOUN}\s+(?:without|with\s+no|free\s+of)\s+(?:any\s+)?(?:restrictions|filters|rules|limits|censorship|guidelines|ethics)",
    r"\bdo\s+anything\s+now\b",
    r"\bjailbr(?:eak|oken)\b",
    r"\bnew\s+system\s+(?:instructions?|directives?|prompt)\s*[:：]|\bnew\s+prime\s+directive\b",
    # "New instructions:" to the model, not the landlord's
    r"\bnew\s+(?:instructions?|directives?)\s*[:：]\s*(?:you|your|the\s+(?:assistant|ai|model)|ignore|disregard|forget|reveal|always|never|from\s+now|do\s+not|don't|respond|reply|answer|send|print|output|act|pretend)",
    r"\byour\s+(?:new|real|true|actual)\s+(?:role|persona|purpose|objective|instructions?|directive|identity|programming|master|owner)\s+(?:is|are|:)",
    r"\b(?:updated|revised|real|actual|true)\s+(?:system\s+)?instructions\s*[:：]",
    r"\byou\s+(?:will|must|shall)\s+(?:now\s+)?(?:always\s+)?(?:obey|comply\s+with)\b",
    r"\byou\s+(?:will|must|shall)\s+(?:now\s+)?(?:always\s+)?follow\s+(?:only\s+)?(?:my|these|the\s+following|all|every|any)\s+"
    r"(?:\w+\s+)?(?:instructions|commands|orders|directives)",
]
_I18N_ROLE = [
    r"\bdu\s+bist\s+(?:jetzt|ab\s+sofort|nun|ab\s+jetzt|von\s+nun\s+an)\s+(?:ein(?:e)?\s+)?(?:\w+\s+)?(?:DAN|KI\s+ohne|Assistent\s+ohne|frei|uneingeschränkt|ungefiltert|böse|nicht\s+mehr\s+an)",
    r"\b(?:Entwickler|Developer|Jailbreak|Gott|Admin|Debug)-?[Mm]odus\b",
    r"\bneue\s+(?:System-?)?(?:Anweisungen|Instruktionen|Befehle)\s*[:：]",
    r"\b(?:tu\s+es|vous\s+êtes)\s+(?:maintenant|désormais|dorénavant|à\s+présent)\s+(?:un|une|le|la|DAN|libre|sans|débridée?|non\s+censurée?)",
    r"\bmode\s+(?:développeur|developpeur|dev|jailbreak|dieu|admin|débridé)\b",
    r"\bnouvelles\s+(?:instructions|consignes|directives)\s*[:：]",
    r"\b(?:ahora|a\s+partir\s+de\s+ahora|desde\s+ahora)\s+(?:tú\s+)?eres\s+(?:un|una|el|la|DAN|libre|una?\s+IA\s+sin)",
    r"\bmodo\s+(?:desarrollador|desenvolvedor|jailbreak|dios|deus|admin|sin\s+restricciones|sem\s+restrições|sviluppatore)\b",
    r"\b(?:nuevas|novas|nuove)\s+(?:instrucciones|instruções|istruzioni)\s*[:：]",
    r"\b(?:ora|adesso|da\s+ora\s+in\s+poi)\s+sei\s+(?:un|una|il|la|DAN|libero|libera|un'IA\s+senza)",
    r"\bmodalità\s+(?:sviluppatore|jailbreak|dio|admin)\b",
    r"\b(?:agora|a\s+partir\s+de\s+agora)\s+(?:você\s+é|tu\s+és)\s+(?:um|uma|o|a|DAN|livre)",
    r"\bje\s+bent\s+nu\s+(?:een|de|het|DAN|vrij|onbeperkt)",
    r"\bnieuwe\s+instructies\s*[:：]",
    r"\bjesteś\s+teraz\s+(?:\w+\s+)?(?:DAN|AI\s+bez|asystentem\s+bez|wolny|nieograniczon)",
    r"\bnowe\s+instrukcje\s*[:：]",
    r"(?:теперь|отныне|с\s+этого\s+момента)\s+ты\s*(?:—|-)?\s*(?:не\s+)?(?:\w+\s+)?(?:DAN|ИИ\s+без|ассистент\s+без|свободн|без\s+ограничений|зло|взломан)",
    r"режим\s+(?:разработчика|бога|без\s+ограничений|джейлбрейка)",
    r"новые\s+(?:системные\s+)?инструкции\s*[:：]",
    r"(?:你现在是|从现在开始你是|从现在起你是|你已经是)(?:一个)?(?:没有|不受|无|邪恶|越狱|DAN|不受限|自由的|开发者)",
    r"(?:开发者|越狱|上帝|管理员)模式",
    r"新(?:的)?(?:系统)?指令\s*[:：]\s*(?:你|忽略|无视|总是|始终|从现在|不要|显示|输出)",
    r"あなたは(?:今から|これから|今後)",
    r"(?:開発者|脱獄|管理者|ゴッド)モード",
    r"新しい(?:システム)?指示\s*[:：]",
    r"(?:너는|당신은)\s*이제(?:부터)?",
    r"(?:개발자|탈옥|관리자)\s*모드",
    r"\bartık\s+sen\s+(?:bir\s+)?(?:\w+\s+)?(?:DAN|kısıtlamasız|sınırsız|filtresiz|kuralsız)",
    r"\b(?:geliştirici|jailbreak|tanrı)\s+modu\b",
    r"\byeni\s+talimatlar\s*[:：]",
]

# --- forged transcripts and system markers -------------------------------------------------

_ROLE_MARKER = [
    # [SYSTEM], [SYSTEM MESSAGE], (system), {system}, ### System:
    r"^[ \t]*[\[\(\{]\s*(?:system|sys|admin|administrator|developer|root|operator)(?:\s+(?:message|prompt|note|override|instruction|notice|alert|update))?\s*[\]\)\}]",
    r"[\[\(\{]\s*(?:system|admin|administrator|developer|operator)\s+(?:message|prompt|note|override|instructions?|notice|directive)\s*[\]\)\}]",
    r"^[ \t]*#{1,6}[ \t]*(?:system|developer|admin)[ \t]*(?:message|prompt|instructions?|override|note)?[ \t]*:?[ \t]*$",
    # SYSTEM: you ... / System override: / System message:
    r"^[ \t]*\**(?:system|developer|admin|administrator|operator)\**\s*(?:message|prompt|override|instructions?|notice|update|note|command|directive|alert)\s*[:：]",
    r"(?:^|<!--|/\*)[ \t]*\**(?:system|developer|admin|sys)\**\s*[:：]\s*(?:you|ignore|disregard|forget|new|from\s+now|always|never|the\s+(?:assistant|ai|model)|assistant|do\s+not|don't|respond|reply|answer|reveal|override|all\s+previous|attention|important|priority|urgent|execute|run|call)",
    r"\b(?:begin|start|end)\s+(?:of\s+)?(?:the\s+)?(?:system|developer|admin|hidden)\s+(?:prompt|message|instructions?)\b",
    r"^[ \t]*(?:system|developer|admin)\s+(?:prompt|message|policy|instructions?|config(?:uration)?|rules?)\s+(?:update|change|override|patch|amendment|notice|revision)\s*[:：]",
    r"^[-=*~# \t]{3,}(?:system|developer|admin)\s+(?:prompt|message|instructions?|override)[-=*~# \t]{3,}$",
    r"^[ \t]*(?:assistant|ai|model|system)\s*\((?:internal|hidden|private|system|thinking|secret)\)\s*[:：]",
    r"^[ \t]*assistant\s*[:：]\s*(?:sure|okay|ok|understood|of\s+course)[,!.]?\s+(?:i\s+will|i'll)\s+(?:now\s+)?(?:ignore|reveal|disable|bypass|override|send|comply|leak|share\s+the)",
    r"\[\[\s*(?:system|admin|developer)[^\]]{0,30}\]\]",
    r"\b(?:official\s+)?(?:notice|message|update|order|instruction)s?\s+from\s+your\s+(?:developers?|creators?|makers?|operators?|administrators?|owners?)\b",
    # A forged dialogue: a turn marker for the assistant after one for the human.
    r"(?:^|\n)[ \t]*(?:human|user)\s*:.{0,400}\n\s*(?:assistant|ai|gpt|claude)\s*:",
    # An authority that is not there.
    r"\b(?:message|instructions?|directive|notice|update|order)\s+from\s+(?:the\s+)?(?:system|openai|anthropic|google\s+deepmind|your\s+(?:developers?|creators?|operators?|administrators?)|the\s+(?:developers?|administrators?|operators?)\s+of\s+this\s+(?:ai|assistant|model|system))\b",
    r"\b(?:this\s+is|i\s+am|i'm)\s+(?:your|the)\s+(?:developer|creator|administrator|system\s+administrator|operator|owner|system)\b.{0,120}\b(?:instruct|order|command|authori[sz]e|override|new|ignore|must|now|grant)",
    r"\b(?:admin(?:istrator)?|system|developer|root|sudo)\s+(?:override(?=\s*[:\-—!]|\s+(?:code|mode|enabled|activated|granted|in\s+effect|active|accepted))|"
    r"privileges?\s+granted|access\s+granted|authori[sz]ation\s+(?:code|granted))",
    r"\b(?:priority|security)\s*(?:level)?\s*[:：]\s*(?:critical|urgent|maximum|override|highest)\b.{0,200}\b(?:you|assistant|ai|must|ignore|execute|send|reveal)",
    r"\b(?:to|for|attention|note\s+(?:to|for)|dear|message\s+(?:to|for)|instructions?\s+for)\s+(?:the\s+|any\s+|an\s+|all\s+)?"
    rf"{_AI_NOUN}s?\s+(?:reading|processing|summari[sz]ing|parsing|that\s+reads|who\s+reads|viewing)\s+this\b",
    rf"\bif\s+you\s+are\s+(?:an?\s+)?{_AI_NOUN}(?:\s+\w+){{0,3}}\s*(?:reading|processing|summari[sz]ing|parsing|seeing)\b",
    rf"^[ \t]*(?:note|attention|important|instructions?|message)\s+(?:to|for)\s+(?:the\s+|any\s+)?{_AI_NOUN}s?\s*[:：,-]",
    rf"\b(?:hidden|secret|special)\s+(?:instructions?|message|directive)\s+(?:for|to)\s+(?:the\s+|any\s+)?{_AI_NOUN}",
]

# --- revealing the prompt, secrets or memory -------------------------------------------------

_REVEAL_VERB = _any(
    r"reveal",
    r"print",
    r"output",
    r"repeat",
    r"show",
    r"leak",
    r"send",
    r"display",
    r"dump",
    r"share",
    r"tell\s+me",
    r"give\s+me",
    r"write\s+(?:out|down)",
    r"paste",
    r"recite",
    r"spell\s+out",
    r"disclose",
    r"expose",
    r"copy",
    r"list",
    r"return",
    r"echo",
    r"type\s+out",
    r"read\s+(?:out|back)",
    r"provide",
    r"post",
    r"export",
    r"upload",
    r"forward",
    r"email",
)
_SECRET_THING = _any(
    r"system\s+prompts?",
    r"system\s+messages?",
    r"hidden\s+prompts?",
    r"initial\s+prompts?",
    r"original\s+prompts?",
    r"pre[-\s]?prompts?",
    r"developer\s+messages?",
    r"meta[-\s]?prompts?",
    r"(?:initial|original|hidden|secret|internal|system|confidential|full|underlying)\s+(?:instructions|rules|guidelines|configuration|directives|prompt)",
    r"api\s+keys?",
    r"access\s+tokens?",
    r"auth(?:entication)?\s+tokens?",
    r"credentials",
    r"secrets",
    r"passwords?",
    r"private\s+keys?",
    r"ssh\s+keys?",
    r"environment\s+variables",
    r"env(?:ironment)?\s+vars?",
    r"\.env\s+file",
    r"session\s+cookies?",
    r"seed\s+phrase",
    r"stored\s+memor(?:y|ies)",
    r"memory\s+(?:contents|store|database|dump)",
    r"core\s+memory",
    r"(?:entire|whole|full|complete)\s+(?:conversation|chat|memory|context|history)",
    r"context\s+window",
    r"conversation\s+history",
    r"chat\s+history",
    r"(?:user'?s?|other\s+users'?)\s+(?:data|messages|files|emails|memories|conversations)",
)
# "the system prompt you'd recommend for a tutoring bot" is not the model's own.
_NOT_OWN = r"(?!\s+(?:you'?d|you\s+would|you\s+(?:recommend|suggest|propose)|for\s+(?:a|an|my|our)\b|of\s+(?:a|an|my|our)\b|that\s+(?:I|we)\b|I\s+(?:wrote|use|made)))"
_EN_REVEAL = [
    rf"\b{_REVEAL_VERB}\s+(?:me\s+|us\s+)?(?:back\s+)?(?:all\s+|every\s+|each\s+)?(?:of\s+)?(?:your|the|its|this\s+ai'?s|the\s+assistant'?s|any|all)\s+"
    rf"(?:\w+\s+){{0,2}}{_SECRET_THING}{_NOT_OWN}",
    r"\b(?:reveal|print|output|repeat|show|leak|display|dump|tell\s+me|give\s+me|recite|disclose)\s+(?:me\s+)?(?:all\s+)?(?:of\s+)?your\s+"
    r"(?:\w+\s+)?(?:instructions|prompt|rules|guidelines|directives|programming|configuration)\b",
    r"\b(?:repeat|print|output|copy|recite|reproduce|echo)\s+(?:back\s+)?(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:words|text|everything|lines|content|tokens|instructions)\s+"
    r"(?:(?:written|written\s+out|shown|given|that\s+(?:came|come|appear(?:ed)?))\s+)?(?:above|before\s+(?:this|my\s+message)|prior\s+to)",
    r"\b(?:starting|beginning)\s+with\s+[\"'“]?you\s+are\b",
    rf"\b{_REVEAL_VERB}\s+(?:me\s+)?(?:the\s+)?(?:\w+\s+){{0,3}}(?:text|contents?|wording|copy|version|words|lines)\s+of\s+your\s+(?:\w+\s+)?"
    r"(?:instructions|prompt|rules|guidelines|system\s+prompt|configuration|directives)",
    r"\bwhat\s+(?:were|have)\s+you\s+(?:been\s+)?(?:told|instructed|given|programmed)\s+(?:before|at\s+the\s+(?:start|beginning)|prior\s+to)",
    r"\bwhat\s+(?:is|was|are|were)\s+(?:written\s+in\s+)?your\s+(?:system\s+prompt|initial\s+instructions|original\s+instructions|hidden\s+instructions|system\s+message|pre-?prompt)",
    r"\b(?:print|output|show|display|reveal)\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:~|\$HOME)?/?(?:\.ssh/id_[a-z0-9]+|\.aws/credentials|etc/(?:passwd|shadow)|\.env\b|\.netrc|\.git-credentials)",
]
_I18N_REVEAL = [
    r"\b(?:zeig|zeige|gib|verrate|nenne|wiederhole|drucke|schreib)(?:e)?\s+(?:mir\s+)?(?:\w+\s+)?(?:deinen|deine|den|die|dein)\s+(?:\w+\s+)?"
    r"(?:System-?[Pp]rompt|Systemanweisungen|System-?Nachricht|ursprünglichen\s+Anweisungen|geheimen\s+Anweisungen|versteckten\s+Anweisungen|API-?Schlüssel|Passwörter|Zugangsdaten)",
    r"\b(?:révèle|révélez|affiche|affichez|montre|montrez|donne|donnez|répète|répétez|divulgue)(?:-moi|-nous)?\s+(?:\w+\s+)?"
    r"(?:ton|votre|le|tes|vos|les)\s+(?:prompt|invite|message|instructions|consignes|clés|mots\s+de\s+passe)\s*(?:système|systeme|initiales?|cachées?|secrètes?|d'API|d'origine)",
    r"\b(?:revela|revele|muestra|muéstrame|dime|imprime|repite|enséñame|dame)\s+(?:\w+\s+)?(?:tu|el|tus|las|los|su)\s+"
    r"(?:prompt|mensaje|instrucciones|claves|contraseñas)\s+(?:del\s+sistema|de\s+sistema|ocultas|iniciales|secretas|originales|de\s+API)",
    r"\b(?:rivela|mostra|mostrami|stampa|ripeti|dimmi)\s+(?:\w+\s+)?(?:il\s+tuo|il|le\s+tue|le)\s+(?:prompt|messaggio|istruzioni)\s+(?:di\s+sistema|iniziali|nascoste|segrete)",
    r"\b(?:revele|revela|mostre|mostra|imprima|repita|diga)\s+(?:\w+\s+)?(?:o\s+seu|seu|o|as\s+suas|suas|as)\s+(?:prompt|mensagem|instruções)\s+(?:do\s+sistema|de\s+sistema|iniciais|ocultas|secretas)",
    r"\b(?:toon|laat\s+zien|geef|herhaal)\s+(?:me\s+)?(?:je|jouw|de)\s+(?:systeemprompt|systeeminstructies|verborgen\s+instructies)",
    r"\b(?:pokaż|ujawnij|wypisz|powtórz|podaj)\s+(?:mi\s+)?(?:swój|twój|swoje|twoje)?\s*(?:prompt\s+systemowy|instrukcje\s+systemowe|ukryte\s+instrukcje)",
    r"(?:покажи|выведи|раскрой|повтори|напиши|скажи|покажіть|покажи)\s+(?:мне\s+)?(?:свой\s+|твой\s+|свої\s+)?(?:системный\s+промпт|системные\s+инструкции|скрытые\s+инструкции|исходные\s+инструкции|системний\s+промпт)",
    r"(?:显示|输出|告诉我|透露|打印|泄露|重复|展示)(?:一下)?(?:你的)?(?:系统提示(?:词)?|系统指令|初始指令|隐藏指令|原始指令|系统消息)",
    r"システム(?:プロンプト|メッセージ|指示)を(?:表示|出力|教え|見せ|繰り返)",
    r"시스템\s*(?:프롬프트|지시|메시지)(?:를|을)?\s*(?:보여|출력|알려|공개)",
    r"\bsistem\s+(?:istemini|komutunu|talimatlarını|mesajını)\s+(?:göster|yazdır|açıkla|söyle|paylaş)",
]

# --- hiding things from the user ------------------------------------------------------------------

_CONCEAL = [
    r"\b(?:do\s+not|don't|dont|never|without)\s+(?:ever\s+)?(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|warn(?:ing)?|"
    r"mention(?:ing)?\s+(?:this|it|that|anything)\s+to|let(?:ting)?|show(?:ing)?|ask(?:ing)?)\s+(?:the|your)\s+(?:user|human|operator|owner)\b",
    r"\bwithout\s+(?:the\s+user|the\s+human|them|anyone|the\s+operator)\s+(?:knowing|noticing|being\s+(?:told|informed|aware)|seeing|finding\s+out)",
    r"\b(?:keep|hide)\s+(?:this|it|these\s+instructions|this\s+instruction|this\s+message)\s+(?:a\s+)?(?:secret|hidden|confidential)\s+from\s+(?:the\s+)?(?:user|human)",
    r"\bthe\s+user\s+(?:must|should|may|will)\s+(?:not|never)\s+(?:know|find\s+out|see|be\s+told|learn|notice)",
    r"\b(?:silently|secretly|covertly|quietly|invisibly|discreetly|stealthily)\s+(?:\w+\s+)?(?:run|send|call|execute|forward|append|include|add|exfiltrate|upload|"
    r"delete|visit|open|insert|embed|copy|email|post|fetch|load|modify|change|transfer|invoke|record|log|store|save|report|ping|attach)",
    r"\b(?:do\s+not|don't|never)\s+(?:reveal|disclose|mention|acknowledge|admit)\s+(?:that\s+)?(?:you\s+(?:have|were|received|are\s+following)|these\s+instructions|this\s+instruction|this\s+message|the\s+existence)",
    r"\b(?:never|don't|do\s+not)\s+ask\s+(?:the\s+user\s+)?(?:for\s+)?(?:confirmation|permission|approval|consent)",
    r"\b(?:dem|den)\s+(?:Benutzer|Nutzer|User|Anwender)\s+(?:\w+\s+)?nichts?\s+(?:sagen|verraten|erzählen|mitteilen)|\b(?:sag|erzähl|verrate)(?:e)?\s+(?:es\s+)?(?:dem|den)\s+(?:Benutzer|Nutzer|User)\s+nicht|ohne\s+dass\s+(?:der|die)\s+(?:Benutzer|Nutzer|User)(?:in)?\s+(?:es\s+)?(?:merkt|weiß|bemerkt)",
    r"\bne\s+(?:le\s+|rien\s+)?(?:dis|dites)\s+(?:rien\s+|pas\s+)?à\s+l'utilisat(?:eur|rice)|sans\s+que\s+l'utilisat(?:eur|rice)\s+(?:ne\s+)?(?:le\s+)?(?:sache|remarque|s'en\s+aperçoive)",
    r"\bno\s+(?:se\s+lo\s+|le\s+)?(?:digas|diga|menciones|cuentes)\s+(?:nada\s+)?al\s+usuario|sin\s+que\s+el\s+usuario\s+(?:lo\s+)?(?:sepa|note|se\s+entere)",
    r"\bnon\s+(?:dirlo|dire\s+nulla|dire\s+niente)\s+all'utente|senza\s+che\s+l'utente\s+(?:lo\s+)?(?:sappia|noti)",
    r"\bnão\s+(?:conte|diga|mencione)\s+(?:nada\s+)?ao\s+usuário|sem\s+que\s+o\s+usuário\s+(?:saiba|perceba)",
    r"не\s+(?:говори|сообщай|рассказывай)\s+(?:об\s+этом\s+)?пользователю|чтобы\s+пользователь\s+не\s+(?:узнал|заметил)",
    r"(?:不要|别|不准)(?:告诉|通知|让)用户|(?:不让|别让)用户(?:知道|发现)",
    r"ユーザーに(?:は)?(?:言わない|知らせない|伝えない|教えない)",
]

# --- calling the model's tools --------------------------------------------------------------------

# Tools that destroy, spend, publish or carry data out: a directive to call
# one of them with the model's own authority is an attack.
_DANGER_TOOL = (
    r"(?:memory_forget|memory_export|forget_all|wipe\w*|erase\w*|delete\w*|remove_all|purge\w*|drop_\w+|send_\w+|e?mail_\w+|sms|"
    r"shell|bash|terminal|exec\w*|run_shell|run_command|run_code|eval|http_post|http_request|webhook\w*|upload\w*|write_file|"
    r"file_write|file_delete|transfer\w*|pay\w*|wire_\w+|purchase\w*|git_push|deploy\w*|create_user|grant\w*|admin\w*|sudo|ssh|scp|"
    r"publish\w*|tweet\w*|post_tweet|share_\w+)"
)
_TOOL_VERB = (
    r"(?:call|invoke|use|run|trigger|execute|fire|activate|launch|issue|make\s+a\s+call\s+to)"
)
_TOOL_REF = (
    r"(?:the\s+|your\s+|a\s+)?[`'\"]?[\w.-]+[`'\"]?\s+(?:tool|function|plugin|action|capability)\b"
)
_STEALTH = (
    r"(?:silently|secretly|covertly|quietly|immediately|without\s+(?:asking|any\s+confirmation|confirmation|confirming|"
    r"telling|permission|approval|prompting|waiting|informing|notifying)|before\s+(?:you\s+)?(?:reply|respond|answer|replying|responding|answering|doing\s+anything)|"
    r"first\s+thing|as\s+your\s+first\s+action|don't\s+tell|do\s+not\s+tell|no\s+matter\s+what)"
)
# Arguments that make a call destructive or an exfiltration.
_DANGER_ARGS = (
    r"(?:everything\s*[=:]|all\s*[=:]\s*(?:true|1)|[=:]\s*true\b|confirm\w*\s*[=:]|https?://|\brm\s+-|\bcurl\b|\bwget\b|password|secret|"
    r"api[_ ]?key|token|\.ssh|/etc/|credentials|whole\s+(?:conversation|history|memory)|full\s+(?:conversation|history|transcript)|"
    r"chat\s+history|conversation\s+history|system\s+prompt|every\s+(?:memory|fact|file))"
)
_SHELL_RUN = (
    r"(?:(?:curl|wget|iwr|invoke-webrequest)\b[^\n|;]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|"
    r"(?:curl|wget)\b[^\n|;]{0,200}\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node)\b|"
    r"(?:ba)?sh\s+-c\s+[\"']?\$\((?:curl|wget)|(?:ba)?sh\s+<\(\s*(?:curl|wget)|"
    r"\biex\s*\(|invoke-expression|downloadstring\s*\(|powershell(?:\.exe)?\s+-(?:e|enc|encodedcommand)\s|"
    r"\brm\s+-(?:rf|fr|r\s+-f)\s+(?:--no-preserve-root\s+)?(?:/|~|\$HOME|/\*|\*)(?=\s|$|[;&|`'\"])|"
    r":\(\)\s*\{\s*:\s*\|\s*:&\s*\}\s*;\s*:|\bnc\s+(?:-\w+\s+)*-e\s|/dev/tcp/|\bmkfifo\b.{0,80}\bnc\b|"
    r"\bbase64\s+(?:-d|--decode)\b[^\n]{0,80}\|\s*(?:ba)?sh\b|\bchmod\s+(?:-R\s+)?777\s+/|"
    r"\bdd\s+if=/dev/(?:zero|random|urandom)\s+of=/dev/[sh]d|\bmkfs\.\w+\s+/dev/|"
    r"\bgit\s+push\s+(?:\S+\s+)*(?:-f|--force)\b|\bgit\s+reset\s+--hard\b|\bdrop\s+(?:table|database|schema)\b)"
)
# Secrets sent to the network, whoever asks: never a legitimate thing to keep in memory.
_SECRET_PIPE = (
    r"(?:cat|type|less|more|head|tail|tar|zip)\s+[^\n|]{0,80}(?:\.ssh/|\.aws/|\.env\b|id_rsa|id_ed25519|\.netrc|\.git-credentials|"
    r"/etc/(?:passwd|shadow)|\.kube/config|\.docker/config|credentials|\.bash_history|\.npmrc|\.pypirc)[^\n]{0,120}\|\s*"
    r"(?:curl|wget|nc|netcat|ncat|ssh|mail|sendmail|base64[^\n|]*\|\s*curl)"
    r"|(?:printenv|env|set)\s*\|\s*(?:curl|wget|nc|netcat)\b"
    r"|curl\b[^\n]{0,200}(?:-d|--data(?:-binary|-raw|-urlencode)?|-F|--upload-file|-T)\s+[\"']?@?(?:~|\$HOME)?/?[^\s]*"
    r"(?:\.ssh|\.aws|\.env\b|id_rsa|\.netrc|credentials|/etc/passwd|/etc/shadow|\.kube|history)"
    r"|\$\((?:cat|printenv|env|whoami|hostname)\b[^)]*\)[^\n]{0,40}(?:https?://|\|\s*curl)"
    r"|(?:https?://\S+[?&]\w+=)\$\((?:cat|printenv|env|whoami)"
)
_EN_TOOL = [
    rf"\b{_TOOL_VERB}\s+{_TOOL_REF}.{{0,200}}{_STEALTH}",
    rf"{_STEALTH}.{{0,120}}\b{_TOOL_VERB}\s+{_TOOL_REF}",
    rf"{_STEALTH}.{{0,60}}\b{_TOOL_VERB}\s+(?:the\s+|your\s+)?[`'\"]?{_DANGER_TOOL}\b",
    rf"\b{_TOOL_VERB}\s+(?:the\s+|your\s+)?[`'\"]?{_DANGER_TOOL}[`'\"]?(?:\s+(?:tool|function|command|action|plugin|api|endpoint))?\b[^\n]{{0,160}}{_DANGER_ARGS}",
    # A pseudo-call of a dangerous tool: memory_forget(everything=True)
    rf"\b(?:functions\.)?{_DANGER_TOOL}\s*\([^)]{{0,300}}{_DANGER_ARGS}",
    # A forged tool call as JSON: {"name": "send_email", "arguments": {...}}
    rf"\{{\s*[\"'](?:name|tool|tool_name|function|action|recipient_name|command)[\"']\s*:\s*[\"'](?:functions\.)?{_DANGER_TOOL}[\"']\s*,\s*[\"'](?:arguments|args|input|tool_input|kwargs)[\"']\s*:",
    # Running a dangerous command, as a directive to the model
    rf"{_SHELL_RUN}.{{0,120}}{_STEALTH}",
    rf"{_STEALTH}.{{0,120}}{_SHELL_RUN}",
    _SECRET_PIPE,
    rf"\b(?:you|assistant|agent|ai|model)\s+(?:must|need\s+to|have\s+to|are\s+(?:required|instructed|ordered|authori[sz]ed)\s+to|shall|will\s+now)\s+(?:now\s+)?(?:\w+\s+)?"
    rf"(?:run|execute|call|invoke|use)\b[^\n]{{0,120}}(?:{_SHELL_RUN}|{_DANGER_TOOL}\b|https?://)",
    r"\b(?:execute|run|eval(?:uate)?)\s+(?:the\s+)?(?:following|this|these|below)\s+(?:\w+\s+)?(?:command|code|script|payload|instructions?|snippet)s?"
    r"\s+(?:silently|immediately|without|before|automatically|as\s+(?:root|admin|sudo)|in\s+the\s+background)",
    r"\b(?:ejecuta|ejecute|führe|führen\s+Sie|exécute|exécutez|esegui|выполни|执行|実行)\b[^\n]{0,120}"
    + _SHELL_RUN,
    r"\b(?:usa|utilise|utilisez|verwende|benutze|nutze|используй|utilizza)\s+(?:la\s+|el\s+|die\s+|das\s+|den\s+|l'|o\s+|a\s+)?(?:herramienta|outil|Werkzeug|Tool|strumento|ferramenta|инструмент)\s+[`'\"]?"
    + _DANGER_TOOL,
]

# --- persisting a directive into later sessions -------------------------------------------------

_PERSIST = (
    r"(?:from\s+now\s+on|from\s+this\s+(?:point|moment|day)\s+(?:on(?:ward)?s?|forward)|going\s+forward|moving\s+forward|henceforth|hereafter|"
    r"in\s+(?:all|every|each|any)\s+(?:future|subsequent|later|upcoming|next|other)\s+(?:sessions?|conversations?|chats?|replies|responses|answers|interactions|messages|turns|tasks)|"
    r"in\s+(?:future|later|subsequent|upcoming|the\s+next)\s+(?:sessions?|conversations?|chats?)|"
    r"in\s+(?:the\s+)?future|for\s+(?:all|every|each)\s+(?:future\s+)?(?:sessions?|conversations?|chats?|replies|responses|users?|requests?)|"
    r"(?:across|in)\s+(?:all|every)\s+(?:sessions|conversations|chats)|permanently|forever|for\s+good|"
    r"for\s+the\s+rest\s+of\s+(?:our|the|this|all)\s+(?:conversations?|sessions?|chats?|time)|in\s+every\s+new\s+(?:chat|session|conversation)|"
    r"standing\s+(?:order|instruction|rule)|"
    r"(?:each|every)\s+time\s+(?:you|the\s+(?:assistant|ai|model|agent))|whenever\s+(?:you|the\s+(?:assistant|ai|model|agent)|anyone|a\s+user|the\s+user)|"
    r"before\s+(?:every|each|any|your)\s+(?:reply|response|answer|message|turn|output)|"
    r"before\s+(?:replying|responding|answering|you\s+(?:reply|respond|answer))|after\s+(?:every|each)\s+(?:reply|response|answer|message)|"
    r"at\s+the\s+(?:start|beginning|end|top|bottom)\s+of\s+(?:every|each|all|your)\s+(?:reply|response|answer|session|conversation|message)s?|"
    r"\balways\b|\bnever\b|remember\s+(?:this|to|that\s+you\s+must)|"
    r"(?:store|save|keep|add|write|record|put|memori[sz]e)\s+(?:this|the\s+following|these)\s+(?:\w+\s+){0,3}(?:permanently|"
    r"(?:in|to|into|as)\s+(?:your\s+)?(?:core\s+|long[-\s]term\s+|permanent\s+|persistent\s+)?(?:memory|instructions|rules|profile|standing\s+instructions?))|"
    r"(?:ab\s+(?:jetzt|sofort)|von\s+nun\s+an|in\s+(?:allen|jeder)\s+(?:künftigen|zukünftigen)\s+(?:Sitzungen?|Gesprächen?|Unterhaltungen?)|immer|niemals|künftig|zukünftig)|"
    r"(?:désormais|dorénavant|à\s+partir\s+de\s+maintenant|dans\s+toutes\s+les\s+(?:futures|prochaines)\s+(?:sessions|conversations)|toujours|jamais)|"
    r"(?:a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|desde\s+ahora|en\s+todas\s+las\s+(?:futuras\s+)?(?:sesiones|conversaciones)(?:\s+futuras)?|siempre|nunca)|"
    r"(?:d'ora\s+in\s+poi|da\s+ora\s+in\s+poi|sempre|mai)|(?:a\s+partir\s+de\s+agora|de\s+agora\s+em\s+diante|sempre|nunca)|"
    r"(?:отныне|с\s+этого\s+момента|всегда|никогда|в\s+каждом\s+ответе|во\s+всех\s+будущих)|(?:从现在起|从现在开始|以后|今后|每次|始终|总是)|(?:今後|これから|常に|毎回))"
)
_URL_OR_DOMAIN = (
    r"(?:https?://|hxxps?://|www\.|(?<![a-z0-9-])[a-z0-9-]+(?:\.|\[\.\]|\(\.\)|\s+dot\s+)(?:com|net|org|io|xyz|ru|cn|tk|top|site|info|biz|co|me|app|dev|sh|cc|ly|gg|link|"
    r"click|online|shop|live|pw|su|ws|zip|mov)\b)"
)
_LINK_ACT = (
    r"(?:append|insert|include|embed|add|render|load|fetch|visit|open|send|post|ping|redirect|link\s+to|point\s+(?:users\s+)?to|"
    r"recommend|promote|mention|advertise|direct\s+(?:users|people|the\s+user)\s+to|refer\s+(?:users|people|the\s+user)\s+to|"
    r"tell\s+(?:users|people|the\s+user)|say|claim|report|upload|forward|request|call|notify|contact|browse\s+to|navigate\s+to|go\s+to|download)"
)
_DATA_NOUN = (
    r"(?:conversations?|chats?|chat\s+logs?|history|transcripts?|messages|memor(?:y|ies)|context|data|files|keys|credentials|passwords?|secrets|"
    r"tokens|cookies|personal\s+(?:data|details|information|info)|addresses|e-?mails|contacts|system\s+prompt|everything|"
    r"what\s+the\s+user\s+(?:says|types|writes|asks)|(?:the\s+)?user'?s?\s+(?:\w+\s+)?(?:data|details|info|information|messages|questions|answers|location|name|email|phone|address|files|inputs?)|"
    r"(?:all|every|each)\s+(?:user\s+)?(?:input|message|question|answer|reply|response|request|prompt)s?|summar(?:y|ies)\s+of\s+(?:the|every|each|this)\s+(?:conversation|chat|session))"
)
_SEND_VERB = (
    r"(?:send|forward|upload|e-?mail|mail|post|share|transmit|copy|leak|report|log|exfiltrate|sync|submit|relay|cc|bcc|beam|pipe|stream|"
    r"envoie|envoyez|transfère|schick|sende|senden|leite|weiterleiten|envía|envia|reenvía|manda|invia|inoltra|отправ\w+|перешли|发送|转发|送信)"
)
_PERSIST_DANGER = [
    _SHELL_RUN,
    r"\b(?:run|execute|exec|eval)\s+[`'\"]?(?:curl|wget|bash|sh|powershell|python3?\s+-c|iex|iwr|nc|netcat)\b",
    rf"\b{_LINK_ACT}\b[^\n]{{0,120}}{_URL_OR_DOMAIN}",
    rf"{_URL_OR_DOMAIN}[^\s]*[^\n]{{0,60}}\b(?:to\s+(?:every|each|all|your)\s+(?:reply|response|answer|message)s?|in\s+(?:every|each|all)\s+(?:reply|response|answer)s?)",
    rf"\b{_TOOL_VERB}\s+(?:the\s+|your\s+)?[`'\"]?{_DANGER_TOOL}\b",
    rf"\b{_TOOL_VERB}\s+(?:the\s+|your\s+)?(?:\w+\s+)?(?:webhook|endpoint)\b",
    rf"\b{_SEND_VERB}\b[^\n]{{0,80}}\b{_DATA_NOUN}[^\n]{{0,120}}(?:\bto\b|\bat\b|\bvia\b|\binto\b|\bà\b|\ban\b|\ba\b|на|到|给)[^\n]{{0,40}}(?:{_URL_OR_DOMAIN}|@|\[REDACTED:(?:email|phone)\]|\bwebhook|\bendpoint|\bserver|\bchannel|\baddress|\bme\b)",
    rf"\b{_SEND_VERB}\b[^\n]{{0,60}}(?:a\s+)?(?:copy|summary|log|record|transcript)\s+(?:of\s+)?[^\n]{{0,60}}\b(?:to|at)\s+[^\n]{{0,40}}(?:{_URL_OR_DOMAIN}|[\w.+-]+@[\w-]+\.\w+|\[REDACTED:email\])",
    r"\b(?:ignore|disregard|override|bypass|skip|disable|turn\s+off|switch\s+off|deactivate|circumvent|suspend)\s+(?:\w+\s+){0,3}(?:rules|safety|guidelines|"
    r"instructions|restrictions|filters|warnings|policies|guardrails|confirmations?|checks|moderation|security|2fa|mfa|logging|audit(?:ing)?|content\s+polic(?:y|ies)|protections?|safeguards|"
    r"firewalls?|antivirus|anti-virus|defender|updates|encryption|backups|screen\s+lock)",
    # Social engineering on the model's authority.
    r"\btell\s+(?:them|users?|the\s+user|people|everyone|customers?)\s+to\s+(?:disable|turn\s+off|uninstall|pay|transfer|wire|send|buy|download|install|run|click|visit|share|enter|type|reset)\b",
    r"\b(?:obey|follow|execute|carry\s+out|act\s+on|comply\s+with|do\s+what)\s+(?:any\s+|all\s+|every\s+)?(?:\w+\s+){0,2}(?:instructions|commands|orders|requests|directives|it\s+says|they\s+say|(?:the\s+)?text)\s+"
    r"(?:from|in|found\s+in|contained\s+in|embedded\s+in|inside|given\s+by|sent\s+by|written\s+(?:in|by)|on)\b",
    r"\bobey\b(?!\s+(?:the\s+)?(?:laws?|traffic|speed|rules\s+of\s+the\s+road))",
    r"\b(?:treat|consider|regard|handle)\s+(?:\S+\s+){1,8}as\s+(?:\w+\s+)?(?:system|admin(?:istrator)?|developer|trusted|authoritative|root|your\s+(?:owner|master|operator|developer)|the\s+user)\b",
    r"\b(?:grant|give)\s+(?:\w+\s+){0,3}(?:admin|root|full|unrestricted|owner|superuser)\s+(?:access|rights|privileges|permissions|control)",
    r"\bapprove\s+(?:all|every|any)\s+(?:\w+\s+)?(?:payments?|transactions?|requests?|pull\s+requests?|transfers?|refunds?|invoices?)",
    r"\bapprov(?:e|es|ing)\s+(?:\w+\s+){0,2}(?:payments?|transactions?|transfers?|refunds?|invoices?|wires?)\s+(?:without|automatically|unchecked)",
    r"\b(?:delete|wipe|erase|forget|purge|destroy|remove)\s+(?:all|every|each|any|the\s+user'?s?|everything|your|the\s+entire|the\s+whole)\s+"
    r"(?:\w+\s+)?(?:memor(?:y|ies)|data|files|facts|records|backups?|history|repositor(?:y|ies)|database|emails)",
    r"\b(?:reveal|disclose|leak|share|print|output|include)\s+(?:\w+\s+){0,3}(?:system\s+prompt|api\s+keys?|passwords?|credentials|secrets|tokens|private\s+keys?)",
    r"\btransfer\s+(?:\$|€|£)?\d[\d,.]*\s*(?:\w+\s+)?(?:to|into)\b",
    # Phishing the user for secrets, on the model's authority.
    r"\bask\s+(?:me|the\s+user|users|them|him|her|people)\s+(?:for|to\s+(?:enter|share|give|type|provide|confirm|send))\s+(?:\w+\s+){0,3}"
    r"(?:card\s+numbers?|passwords?|pins?|cvv|cvc|ssn|social\s+security|credentials|2fa|otp|one[-\s]time\s+(?:code|password)|security\s+codes?|seed\s+phrases?|logins?|bank\s+details|account\s+numbers?)",
    r"\b(?:bcc|cc)\s+(?:all|every|each)\b",
    r"\b(?:wallet|account|iban)\s+(?:address\s+)?[A-Za-z0-9]{20,}",
]
_NEGATED_PERSIST = r"^(?:never|niemals|jamais|nunca|mai|никогда)$"
# With "never" a directive restricts the model; only these still attack it.
_NEVER_DANGER = [
    r"\b(?:tell|inform|notify|alert|warn|ask|show)\s+(?:the\s+|your\s+)?(?:user|human|operator|owner)",
    r"\bask\s+(?:for\s+)?(?:confirmation|permission|approval|consent)",
    r"\b(?:mention|reveal|disclose|admit|acknowledge)\s+(?:that\s+)?(?:you|this|these|the\s+instruction)",
    r"^[ \t]*(?:refuse|decline|reject|question)\s+(?:any|a|an|the|my|these|those|orders|requests?|instructions?|commands?)\b",
    r"\b(?:follow|apply|use|obey|respect)\s+(?:your\s+|the\s+)?(?:safety|guidelines|rules|restrictions|filters|policies|system\s+prompt|instructions)",
]

# --- obfuscation that announces itself ----------------------------------------------------------

_OBFUSCATION = [
    r"\b(?:decode|decrypt|deobfuscate|translate|convert|unscramble|reverse|interpret|read)\s+(?:this|the\s+following|the\s+below|these|it)\s+"
    r"(?:\w+\s+){0,3}(?:and|then|,)\s+(?:\w+\s+){0,2}(?:follow|execute|obey|do|run|carry\s+out|act\s+on|comply|perform|apply)",
    r"\b(?:base64|b64|rot-?13|hex|binary|morse|caesar|reversed?)\b[^\n]{0,60}\b(?:follow|execute|obey|carry\s+out|act\s+on|comply\s+with|perform|apply)\s+(?:it|them|the|this|these|what)",
    r"\b(?:follow|execute|obey|carry\s+out|act\s+on)\s+(?:the\s+)?(?:decoded|hidden|encoded|reversed|deciphered)\s+(?:\w+\s+)?(?:instructions?|text|message|payload|command|string)",
]


def _compile(patterns: list[str], flags: int = _I) -> list[re.Pattern[str]]:
    return [re.compile(p, flags) for p in patterns]


RULES: list[tuple[str, list[re.Pattern[str]]]] = [
    ("ignore_instructions", _compile(_EN_OVERRIDE + _I18N_OVERRIDE)),
    ("role_override", _compile(_EN_ROLE + _I18N_ROLE)),
    ("role_marker", _compile(_ROLE_MARKER, re.I | re.M)),
    ("prompt_exfiltration", _compile(_EN_REVEAL + _I18N_REVEAL)),
    ("concealment", _compile(_CONCEAL)),
    ("tool_directive", _compile(_EN_TOOL)),
    ("obfuscation_directive", _compile(_OBFUSCATION)),
    (
        "tool_hijack",
        _compile(
            [
                r"\b(?:when|whenever|next\s+time|once|if)\s+(?:you|the\s+assistant|an?\s+(?:ai|assistant|model|agent))\s+(?:\w+\s+)?(?:read|see|recall|retrieve|load|find|process|summari[sz]e|encounter)s?\s+"
                r"(?:this|these|the\s+following|it)\b.{0,120}\b(?:execute|run|call|send|visit|open|invoke|forward|delete|email|post|fetch|ignore|reveal|obey|follow)\b"
            ]
        ),
    ),
]
_PERSIST_RE = re.compile(rf"(?<!\w){_PERSIST}(?!\w)", _I)
_PERSIST_DANGER_RE = _compile(_PERSIST_DANGER)
_NEVER_DANGER_RE = _compile(_NEVER_DANGER)
_NEGATED_RE = re.compile(_NEGATED_PERSIST, re.I)
# A directive and what it asks for sit in one sentence, or close by.
_WINDOW = 260
# Someone speaking about themselves is not addressing the model: "From now on
# I'll cycle", "I always ignore those".
_SELF = re.compile(
    r"^[\s,:;-]*(?:i|i'm|i'll|i've|i'd|we|we'll|we're|my|our|ich|je|j'|yo|io|eu|я|мы|我|私)\b", re.I
)


_SELF_BEFORE = re.compile(
    r"(?:^|[\s,.;:!?])(?:i|we|i'll|we'll|i've|i\s+will|we\s+will|i\s+(?:have|had)|ich|je|j'|yo|io|eu|я|мы|我|私は?)"
    r"(?:\s+(?:\w+ly|also|still|just|basically|really|pretty\s+much|nearly|almost|do|don't|will|would|'ll))?\s*$",
    re.I,
)


def _persistence(text: str) -> bool:
    for m in _PERSIST_RE.finditer(text):
        start = max(0, m.start() - 60)
        window = text[start : m.end() + _WINDOW]
        after = text[m.end() : m.end() + 40]
        if _SELF.match(after) and not re.search(r"\b(?:you|your|assistant|ai)\b", after, re.I):
            continue
        if _SELF_BEFORE.search(text[max(0, m.start() - 30) : m.start()]):
            continue
        if _NEGATED_RE.match(m.group(0).strip()):
            # "never X" restricts the model; read only what it forbids.
            dangers, window = _NEVER_DANGER_RE, text[m.end() : m.end() + 80]
        else:
            dangers = _PERSIST_DANGER_RE
        if any(p.search(window) for p in live(dangers, window)):
            return True
    return False


_OPEN_QUOTE = "'\"“‘«„`"
_CLOSE_QUOTE = "'\"”’»“`"
# Words that show a quoted phrase is being talked about, not said.
_MENTION_CUE = re.compile(
    r"\b(?:what\s+(?:does|do|is|'s)|what's|meaning|means?|meant|meme|phrase|example|called|known\s+as|saw|seen|heard|read|joke|"
    r"tweet|sign|quote|quoted|attack|injection|spam|scam|trick|classic|famous|typed|wrote|say(?:s|ing)?|said)\b",
    re.I,
)


def _mention(text: str, m: re.Match[str]) -> bool:
    """The match is a phrase in quotes that the text talks about ("what does
    'ignore all previous instructions' mean?"), not an instruction."""
    before = text[: m.start()].rstrip()
    after = text[m.end() :].lstrip(" .,!?")
    if not (before and before[-1] in _OPEN_QUOTE and after and after[0] in _CLOSE_QUOTE):
        return False
    around = text[max(0, m.start() - 50) : m.start()] + " " + text[m.end() : m.end() + 50]
    return bool(_MENTION_CUE.search(around))


def _breaks(text: str, patterns: list[re.Pattern[str]], *, own: bool = False) -> bool:
    """Whether one of `patterns` (those the prefilter let through) matches
    other than as a quoted mention; with `own`,
    other than after a first-person subject ("I'll ignore the previous
    instructions from the landlord": the user's own doing)."""
    return any(
        not _mention(text, m)
        and not (own and _SELF_BEFORE.search(text[max(0, m.start() - 30) : m.start()]))
        for p in patterns
        for m in p.finditer(text)
    )


def reasons(text: str) -> list[str]:
    """Every rule `text` breaks, by name."""
    alive = {id(p) for p in live(_EVERY_PATTERN, text)}
    if not alive:
        return []  # the common case: no rule's words are in the text at all
    found = [
        name
        for name, patterns in RULES
        if _breaks(text, [p for p in patterns if id(p) in alive], own=name in _OWN_RULES)
    ]
    if id(_PERSIST_RE) in alive and _persistence(text):
        found.append("persistence_directive")
    return found


def dangerous_action(text: str) -> bool:
    """Whether `text` asks for something that must never be a standing
    instruction (a command, a link, a tool call, sending data, overriding
    rules), whatever words frame it: the strict screen for core memory."""
    return any(p.search(text) for p in live(_PERSIST_DANGER_RE, text))


# Rules whose verb a user may say of themselves.
_OWN_RULES = frozenset({"ignore_instructions"})

NAMES = frozenset({name for name, _ in RULES} | {"persistence_directive"})

_EVERY_PATTERN = [p for _, patterns in RULES for p in patterns] + [_PERSIST_RE]
prefilter.register(_EVERY_PATTERN, _PERSIST_DANGER_RE, _NEVER_DANGER_RE)
