"""Personal data and secrets out of a reader's text before the question log keeps it: `scrub`.

Readers are students; a question or a comment may carry an e-mail address, a phone number, a key pasted
by mistake. What is replaced, in this order (each pass runs on the previous one's output, so a later
pattern never sees what an earlier one removed):

1. `[secret]`: a PEM private key; a JWT; a value after `Bearer`/`Basic` or after a secret-sounding label
   (`password=`, `api_key:`, `token=`, ...); the shapes of well-known keys (our own `brk_...`, AWS `AKIA...`,
   OpenAI/Anthropic `sk-...`, GitHub `ghp_...`, Slack `xox?-`, Google `AIza...`, Stripe `sk_live_...`); and a
   long high-entropy token (>= 20 characters mixing upper case, lower case and digits, or >= 32 hex
   digits; Cohere keys and AWS secret keys have no prefix and are caught here).
2. `[credentials]`: the `user:password@` of a URL (the rest of the URL stays: it names a page).
3. `[email]`: `name@domain.tld` (Unicode too), with spaces around the `@`, and the obfuscated forms
   `name [at] domain [dot] com`, `name(at)domain(dot)com`, `name at domain dot com` (the bare-word form only
   when its last part is a common top-level domain, so "the robot at home dot product" is kept).
4. `[ip]`: an IPv4 address outside the private, loopback and link-local ranges (`192.168.1.10`, the
   address of a robot on a lab network, is the book's subject, not a person's). IPv6 is not handled.
5. `[phone]`: a number written as a phone number: with `+` or `00` and a country code; `(555) 123-4567`;
   groups joined by `-` or `.` (7 to 15 digits; not a date `2024-01-15`, a year range `2019-2023`, a
   section `3.1.2` or a version `3.10.12`: those have fewer digits or single-digit groups); space-separated
   groups that start with a trunk `0` (`020 7946 0958`) or follow the North American 3-3-4 shape; a bare
   run of 10 to 15 digits; and any 7 to 15 digits right after a phone word (`call`, `tel`, `mobile`,
   `whatsapp`, `my number`, ...).

Kept on purpose: "ROS 2", "Section 3.1.2", "Python 3.10", years, equations, decimals and vectors
("0.5 0.25 1.0"), resolutions ("1920 1080"), private IPs. What this cannot catch (README, "What the
question log keeps"): names, postal addresses, dates of birth, student or ID numbers that look like plain
numbers, phone numbers spelled in words ("five five five ..."), and a secret shorter than 20 characters or
with no digits. Plain regular expressions: phonenumbers (needs a default region for national numbers and
adds tens of MB), scrubadub (unmaintained, pulls textblob) and presidio (a spaCy model, hundreds of MB) were
weighed and do not fit a 250 MB Lambda package for this.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections import Counter

EMAIL = "[email]"
PHONE = "[phone]"
SECRET = "[secret]"
CREDENTIALS = "[credentials]"
IP = "[ip]"

_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_SCHEME_VALUE = re.compile(r"\b(Bearer|Basic|Token)(\s+)[A-Za-z0-9._~+/=-]{8,}", re.I)
_LABELLED = re.compile(
    r"\b((?:api[_ -]?key|apikey|access[_ -]?key(?:[_ -]?id)?|secret(?:[_ -]?key)?|client[_ -]?secret|password|passwd"
    r"|pwd|token|auth[_ -]?token|access[_ -]?token|x-api-key)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;&]{4,})", re.I)
_KNOWN_KEYS = re.compile(
    r"\b(?:brk_[A-Za-z0-9_-]{12,}|(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z0-9]{16}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{30,}"
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,})")
_TOKEN = re.compile(r"[A-Za-z0-9_+/=-]{20,}")
_WORD_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
_KEPT_NETWORKS = tuple(ipaddress.IPv4Network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16", "0.0.0.0/32"))
_URL_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^\s/@:]+:[^\s/@]*@", re.I)

_TLDS = r"(?:com|org|net|edu|gov|io|ai|co|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|ru|cn|jp|in|br|au|ca|us|info|dev)"
_EMAIL = re.compile(r"[\w.%+'-]+\s?@\s?[\w-]+(?:\s?\.\s?[\w-]+)*\.[^\W\d_]{2,}")
_EMAIL_MARKED = re.compile(
    r"[\w.%+-]+\s*(?:\[at\]|\(at\)|\{at\}|<at>)\s*[\w-]+(?:\s*(?:\[dot\]|\(dot\)|\{dot\}|<dot>|\.)\s*[\w-]+)+", re.I)
_EMAIL_WORDS = re.compile(rf"\b[\w.+-]+\s+at\s+[\w-]+(?:\s+dot\s+[\w-]+)*\s+dot\s+{_TLDS}\b", re.I)
_EMAIL_AT_DOMAIN = re.compile(r"\b[\w.+-]+\s+(?:at|AT)\s+[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}\b")

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")

_SEP = r"[ \t.\-/]"
_INTERNATIONAL = re.compile(rf"(?<![\w+])(?:\+|00)\s?\d{{1,3}}(?:{_SEP}?\(?\d{{1,4}}\)?){{2,7}}(?!\w)")
_PARENS = re.compile(r"(?<!\w)\(\d{2,5}\)\s?\d{2,4}(?:[ .\-]?\d{2,5}){1,3}(?!\w)")
_JOINED = re.compile(r"(?<![\w.\-])\d{2,5}(?:[.\-]\d{2,5}){1,5}(?![\w\-]|\.\d)")
_TRUNK = re.compile(r"(?<![\w.])0\d{1,4}(?: \d{2,5}){1,5}(?![\w.]*\d)")
_NANP = re.compile(r"(?<![\w.])\d{3} \d{3} \d{4}(?![\w.]*\d)")
_BARE = re.compile(r"(?<![\w.\-])\d{10,15}(?![\w.]*\d)")
_CUE = re.compile(r"\b(?:phone|tel|telephone|call(?:\s+me)?|ring|mobile|cell|whatsapp|signal|sms|text\s+me|fax"
                  r"|(?:my\s+)?(?:number|no\.?|nr\.?))\b[\s:#.]*(?:(?:is|at|on)\s+)?"
                  r"(\+?\(?\d[\d \t().\-/]{5,22}\d)", re.I)
_DATE = re.compile(r"(?:19|20)\d\d([-./])\d{1,2}\1\d{1,2}|\d{1,2}([-./])\d{1,2}\2(?:19|20)\d\d")
_YEARS = re.compile(r"(?:19|20)\d\d\s?[-/]\s?(?:19|20)\d\d")


def scrub(text: str) -> str:
    """`text` with e-mail addresses, phone numbers, URL credentials, public IPs and secrets replaced by
    placeholders (module docstring)."""
    text = _secrets(text)
    text = _URL_CREDENTIALS.sub(lambda m: m.group(1) + CREDENTIALS + "@", text)
    text = _EMAIL_MARKED.sub(EMAIL, text)
    text = _EMAIL.sub(EMAIL, text)
    text = _EMAIL_WORDS.sub(EMAIL, text)
    text = _EMAIL_AT_DOMAIN.sub(EMAIL, text)
    text = _IPV4.sub(_ip, text)
    return _phones(text)


def _secrets(text: str) -> str:
    text = _PEM.sub(SECRET, text)
    text = _JWT.sub(SECRET, text)
    text = _SCHEME_VALUE.sub(lambda m: m.group(1) + m.group(2) + SECRET, text)
    text = _LABELLED.sub(lambda m: m.group(1) + SECRET, text)
    text = _KNOWN_KEYS.sub(SECRET, text)
    return _TOKEN.sub(lambda m: SECRET if _looks_random(m.group(0)) else m.group(0), text)


def _looks_random(token: str) -> bool:
    """A key or a hash, not a word: hex of 32+ digits, or a mix of cases and digits that does not read as
    identifiers (`TurtleBot3WafflePi`, `robot_state_publisher`, `sensor_msgs/msg/LaserScan`)."""
    if len(token) >= 32 and re.fullmatch(r"[0-9a-fA-F]+", token) and re.search(r"\d", token) \
            and re.search(r"[a-fA-F]", token):
        return True
    mixed_case = bool(re.search(r"[a-z]", token) and re.search(r"[A-Z]", token))
    if _AWS_SECRET.fullmatch(token) and mixed_case and re.search(r"[0-9+/]", token):
        return True  # an AWS secret access key's shape: 40 characters of base64
    if not (sum(c.isdigit() for c in token) >= 2 and mixed_case):
        return False
    # Identifiers are made of words ("Turtle", "Bot", "Waffle"); a random token of fragments of one or two.
    parts = _WORD_PARTS.findall(token)
    if parts and sum(map(len, parts)) / len(parts) >= 3.5:
        return False
    counts = Counter(token)
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return entropy >= 3.5


def _ip(match: re.Match[str]) -> str:
    try:
        address = ipaddress.IPv4Address(match.group(0))
    except ValueError:
        return match.group(0)  # not an address ("1.2.300.4"): a version or a section, kept
    if any(address in network for network in _KEPT_NETWORKS):
        return match.group(0)
    return IP


def _digits(text: str) -> int:
    return sum(c.isdigit() for c in text)


def _phone(found: str, low: int = 7) -> str:
    """`[phone]` for a candidate with `low` to 15 digits that is not a date or a range of years."""
    if not low <= _digits(found) <= 15 or _DATE.fullmatch(found) or _YEARS.fullmatch(found):
        return found
    return PHONE


def _joined(found: str) -> str:
    parts = found.split(".")
    if "-" not in found and len(parts) == 4 and all(len(part) <= 3 for part in parts):
        return found  # an address-shaped number `_ip` kept (a private one): not a phone
    return _phone(found)


def _phones(text: str) -> str:
    text = _CUE.sub(lambda m: m.group(0)[:m.start(1) - m.start(0)] + _phone(m.group(1)), text)
    text = _INTERNATIONAL.sub(lambda m: _phone(m.group(0), 8), text)
    text = _PARENS.sub(lambda m: _phone(m.group(0)), text)
    text = _JOINED.sub(lambda m: _joined(m.group(0)), text)
    for pattern in (_TRUNK, _NANP, _BARE):
        text = pattern.sub(lambda m: _phone(m.group(0)), text)
    return text
