"""Links that carry data out when a model renders or follows them.

A remote image in a reply is fetched by the client without a click, so a
stored instruction to show one, with the conversation in its query string, is
an exfiltration channel; so is a link templated to be filled with a secret, or
a directive to send memory to an address. A plain link is ordinary text."""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import unquote

from memory.screening import prefilter
from memory.screening.prefilter import live

_REMOTE = r"(?:https?:)?//|hxxps?://|https?%3a%2f%2f"
_MD_IMAGE = re.compile(rf"!\[[^\]]{{0,500}}\]\(\s*<?(?:{_REMOTE})[^)\s]+", re.I)
# ![alt][ref] ... [ref]: https://...
_MD_REF_IMAGE = re.compile(r"!\[[^\]]{0,500}\]\[([^\]]{1,40})\]", re.I)
_MD_REF_DEF = r"^[ \t]*\[{ref}\]:\s*<?(?:https?:)?//"
_HTML_FETCH = re.compile(
    r"<\s*(?:img|image|iframe|script|embed|object|video|audio|source|track|input|frame|link|meta|svg|use|body|table|td)\b"
    rf"[^>]*\b(?:src|href|data|poster|background|srcset|content|xlink:href|action)\s*=\s*[\"']?\s*(?:[^\"'>]*url=)?(?:{_REMOTE})",
    re.I,
)
_CSS_FETCH = re.compile(
    rf"\burl\(\s*[\"']?(?:{_REMOTE})|@import\s+[\"']?(?:url\()?(?:{_REMOTE})", re.I
)
_URL = re.compile(r"(?:https?|hxxps?)://[^\s<>\"')\]]+", re.I)
# A URL templated to be filled in by the model: {conversation}, {{secret}},
# $(whoami), ${API_KEY}, <DATA>, [INSERT_MEMORY], %7Bx%7D.
_TEMPLATED = re.compile(
    r"\{\{?\s*[\w .:-]{1,60}\s*\}?\}|%7B|\$\(|\$\{|<[A-Z_ ]{3,40}>|%3C[A-Z_]{3,40}%3E|"
    r"\[(?:[A-Z_ -]{3,40}|insert[^\]]{0,40}|your[^\]]{0,40}|user[^\]]{0,40})\]|"
    r"(?:INSERT|ADD|PUT|PLACE|APPEND)[_-][A-Z_]{3,}|\b(?:SECRET|PASSWORD|TOKEN|API_?KEY|CHAT|HISTORY|MEMORY|CONVERSATION|DATA)_?(?:HERE|VALUE)\b",
    re.I,
)
# A query value that is encoded text (not a token or a signature, which
# decode to bytes): something said, carried out in the link.
_QUERY_VALUE = re.compile(r"[?&#][^=&#\s]{0,30}=([A-Za-z0-9+/_%-]{20,}={0,2})")
_COLLECTOR = re.compile(
    r"(?:webhook\.site|requestbin|pipedream\.net|ngrok(?:-free)?\.(?:app|io|dev)|burpcollaborator\.net|oastify\.com|"
    r"interact\.sh|oast\.(?:fun|me|pro|live|site|online)|canarytokens|beeceptor\.com|hookbin|requestcatcher\.com|postb\.in|"
    r"ptsv[23]\.com|webhook\.cool|dnslog\.cn|ceye\.io|trycloudflare\.com|pastebin\.com/api|discord(?:app)?\.com/api/webhooks|"
    r"hooks\.slack\.com/services|api\.telegram\.org/bot)",
    re.I,
)
_SENSITIVE = (
    r"(?:conversations?|chat(?:\s+logs?|\s+history)?|history|transcripts?|messages|memor(?:y|ies)|context|system\s+prompt|"
    r"instructions|credentials|passwords?|secrets?|tokens?|api\s+keys?|keys|cookies|session|personal\s+(?:data|details|information|info)|"
    r"contacts|(?:the\s+)?user'?s?\s+(?:\w+\s+)?(?:data|details|info|information|messages|questions|location|name|email|e-mail|phone|address|files|inputs?|secrets?)|"
    r"everything\s+(?:the\s+user|you\s+know|above|so\s+far|in\s+(?:memory|context))|what\s+the\s+user\s+(?:says|said|types|typed|writes|wrote|asks)|"
    r"(?:all|every|each)\s+(?:user\s+)?(?:input|message|question|answer|prompt|request)s?|ssh\s+keys?|\.env|environment\s+variables|"
    r"(?:the\s+)?(?:above|previous|whole|entire|full)\s+(?:text|conversation|chat|thread|session|context))"
)
_SEND = (
    r"(?:send|forward|upload|e-?mail|mail|post|transmit|copy|leak|exfiltrate|submit|relay|beam|pipe|stream|report|sync|"
    r"log|append|attach|encode|put|include|embed|add|place|write|paste|insert|envoie|envoyez|schick|sende|envía|envia|manda|invia|"
    r"отправь|перешли|发送|转发|送信|送って)"
)
# Where data is sent: a link, an address (redaction has already replaced an
# e-mail address or phone number with its placeholder), a webhook.
_DESTINATION = (
    rf"(?:{_REMOTE}|www\.|\b[\w-]+(?:\.|\[\.\])[a-z]{{2,10}}/|[\w.+-]+@[\w-]+\.[\w.]+|"
    r"\[REDACTED:(?:email|phone)\]|\bwebhook\b|\bendpoint\b|\bserver\b|\burl\b|\blink\b)"
)
_SEND_DATA = re.compile(
    rf"\b{_SEND}\b[^\n]{{0,80}}?\b{_SENSITIVE}\b[^\n]{{0,140}}?(?:\bto\b|\bat\b|\bvia\b|\binto\b|\bin\b|\bas\b|\bà\b|\ban\b|\ba\b|\bnach\b|на|到|给)[^\n]{{0,60}}?{_DESTINATION}",
    re.I,
)
_RENDER = re.compile(
    r"\b(?:include|append|add|insert|embed|put|render|show|display|output|place|end)\s+(?:\w+\s+){0,4}(?:link|image|img|url|pixel|badge|picture|"
    r"markdown|banner|logo|icon|tracker|beacon)s?\b[^\n]{0,120}?\b(?:in|to|at|into|with|on|below|under)\s+(?:the\s+)?(?:end\s+of\s+|bottom\s+of\s+|top\s+of\s+)?"
    r"(?:your|the|every|each|all|any)\s+(?:\w+\s+)?(?:reply|replies|response|responses|answer|answers|output|outputs|message|messages|summary|summaries)"
    rf"[^\n]{{0,160}}?(?:{_REMOTE}|www\.)",
    re.I,
)
_VISIT = re.compile(
    r"\b(?:visit|open|fetch|load|request|call|get|curl|wget|ping|browse\s+to|navigate\s+to|go\s+to|access|hit|click)\s+"
    rf"(?:this\s+|the\s+following\s+|the\s+)?(?:url|link|address|page|endpoint)?\s*:?\s*(?:{_REMOTE})[^\s]*[?&/][^\s]*(?:\{{|%7B|\$\(|<[A-Z]|\[[A-Z])",
    re.I,
)


# A link left open for the model to fill in: "append it to https://x/s?c=".
_EMPTY_VALUE = re.compile(r"[?&][\w.-]{1,30}=$")
_FILL = re.compile(rf"\b(?:{_SEND}|fill|complete|base64|encode)\b", re.I)


# A long opaque value in a parameter named like a payload (a search typed by a
# person has "+" or "%20" between its words).
_PAYLOAD_PARAM = re.compile(
    r"[?&](?:data|d|q|payload|secret|token|key|msg|content|memory|prompt|chat|conv|c|m|u|x)="
    r"(?![^&\s]*(?:\+|%20))[^&\s]{60,}",
    re.I,
)


def _carries_text(url: str) -> bool:
    if _PAYLOAD_PARAM.search(url):
        return True
    for value in _QUERY_VALUE.findall(url):
        decoded = decode_base64(unquote(value))
        if decoded and " " in decoded.strip() and len(decoded) >= 12:
            return True
    return False


def decode_base64(value: str) -> str | None:
    """`value` as base64 (either alphabet) of readable text, else None."""
    raw = value.strip().replace("\n", "")
    if len(raw) < 12:
        return None
    raw += "=" * (-len(raw) % 4)
    try:
        data = base64.b64decode(raw.replace("-", "+").replace("_", "/"), validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    readable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    letters = sum(ch.isalpha() or ch.isspace() for ch in text)
    if not text or readable < len(text) * 0.95 or letters < len(text) * 0.6:
        return None
    return text


def reasons(text: str) -> list[str]:
    found: list[str] = []
    alive = {id(p) for p in live(_PREFILTERED, text)}

    def search(pattern: re.Pattern[str]) -> bool:
        return id(pattern) in alive and pattern.search(text) is not None

    image = search(_MD_IMAGE) or search(_HTML_FETCH) or search(_CSS_FETCH)
    for m in _MD_REF_IMAGE.finditer(text):
        ref = re.escape(m.group(1))
        if re.search(_MD_REF_DEF.format(ref=ref), text, re.I | re.M):
            image = True
    if image:
        found.append("markdown_image")
    urls = _URL.findall(text)
    if (
        any(_TEMPLATED.search(u) or _carries_text(u) for u in urls)
        or any(_COLLECTOR.search(u) and re.search(r"[?&=]|/\S{6,}", u) for u in urls)
        or (any(_EMPTY_VALUE.search(u) for u in urls) and _FILL.search(text))
        or search(_SEND_DATA)
        or search(_RENDER)
        or search(_VISIT)
    ):
        found.append("exfiltration_link")
    return found


# The patterns of reasons() run only where the prefilter finds their words.
_PREFILTERED = [_MD_IMAGE, _HTML_FETCH, _CSS_FETCH, _SEND_DATA, _RENDER, _VISIT]
prefilter.register(_PREFILTERED)
