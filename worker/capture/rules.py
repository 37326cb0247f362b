"""Text heuristics for the capture policy: reasoning, session trivia, derivable facts.

Pure functions over an event's text. Each check returns a short detail sentence when the
text should be refused, else None. They are tuned for precision: a lesson refused by
mistake is lost for good, while a bit of trivia let through only costs a row that the
dedupe gate and recall ranking push down. So every check refuses only when its signal is
present *and* the text carries no lesson marker (why / always / never / instead / ...).

All matching runs on `normalize(text)`, so NFC/NFD, letter case and whitespace variants
of one text get the same verdict.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from memsieve.capture import fastre

# Words that turn an observation into a lesson: a rule, a cause, a preference, a
# correction, a consequence for next time.
_LESSON_RE = re.compile(
    r"\b(?:why|always|never|should(?:n't| not)?|must(?:n't| not)?|instead|because|"
    r"learn(?:ed|t)|lessons?|takeaways?|next time|from now on|(?:in|for) (?:the )?future|"
    r"going forward|"
    r"avoid|prefer(?:red|s)?|don't|do not|doesn't|does not|didn't|did not|won't|can't|cannot|"
    r"isn't|aren't|wasn't|is not|are not|no longer|make sure|ensure|remember|"
    r"turn(?:s|ed) out|root cause|caused? by|the fix|fixed by|fix(?:ed)? it|the cause|"
    r"the (?:bug|problem|issue) (?:is|was)|mistakes?|wrong|gotchas?|pitfalls?|beware|careful|"
    r"rather than|only (?:if|when|after|before|works)|unless|otherwise|whenever|recommend(?:ed)?|"
    r"silently|surpris(?:e|ed|ing|ingly)|unexpected(?:ly)?|actually|correct(?:ion|ed|ly)?|"
    r"realis(?:e|ed)|realiz(?:e|ed)|discovered|noticed that|so that|in order to|"
    r"need(?:s|ed)? to|ha(?:s|ve|d) to|important|note that|keep in mind|watch out|"
    r"consistently|every time|each time|tends? to|repeatedly|again and again|recurring|"
    r"safer|better|worse|instead of|works? (?:better|only)|do this|don't do|use\s+\S+\s+not|"
    r"would have|could have|so (?:the|it|we)|which means|means that|that's why|hence|therefore|"
    r"except|however|but)\b"
    # An imperative opening a sentence or clause is advice: "...; set X explicitly".
    r"|(?:^|[.;:!?]\s)(?:set|use|add|pin|move|run|check|give|keep|call|pass|wrap|put|turn|"
    r"enable|disable|count|strip|quote|store|drop|bump|raise|lower|increase|decrease|limit|cap|"
    r"retry|split|normali[sz]e|validate|escape|mask|rotate|restrict|scope|document|"
    r"start|stop|look|read|write|measure|reject|revert|treat|convert|wait)\s+\S+\s+\S",
    re.IGNORECASE | re.MULTILINE,
)
# Retrospective phrasing and rules win over reasoning cues in the same sentence:
# "Next time I'll check the TTL first" and "I think we should always pin numpy" are lessons.
_RETRO_RE = re.compile(
    r"\b(?:next time|from now on|(?:in )?(?:the )?future|going forward|lessons?|learn(?:ed|t)|"
    r"takeaways?|in hindsight|should have|shouldn't have|root cause|always|never|must|avoid|"
    r"prefer|don't|do not|every time|whenever|rather than|instead of)\b",
    re.IGNORECASE,
)
_REASONING_RE = re.compile(
    # "Let me be clear: ..." and "Let me stress ..." introduce a lesson, not a plan.
    r"^(?:let me (?!be |note|stress|emphasi|remind|repeat|say|point out|add that|warn)|"
    r"(?:ok(?:ay)?|alright|right),? so\b|let's (?:see|think|check|try|look|start|figure)|hmm+|step \d+\s*[:.)-]|"
    r"(?:first|now|next|then|ok(?:ay)?|so|alright|right)\s*,?\s*(?:i'll|i will|i need to|i should|"
    r"i'm going to|i am going to|let me|let's)|wait\b|maybe (?:i|we) (?:should|could|can)|"
    r"perhaps (?:i|we)|thinking:|thought:|i (?:think|guess|wonder) (?:i|we|if)|"
    r"i'll (?:now |first |then |just )?(?:check|look|try|run|open|read|start|see|investigate|"
    r"inspect|search|grep|call|use|write|edit|fix|test|verify|begin|go)|"
    r"i will (?:now |first |then )?\w+|i(?:'m| am) (?:now |just |first |then |also )?going to|"
    r"i need to (?:check|figure|look|"
    r"find|see|understand|verify)|(?:the )?next step is|to do this,? i)",
    re.IGNORECASE,
)
_ACTIVITY_RE = re.compile(
    r"(?:^|\b(?:i|we|the agent|agent|assistant|the assistant|the model|the bot)\s+(?:just |then |also )?)"
    r"(?:ran|executed|opened|read|listed|called|invoked|queried|fetched|searched|grepped|viewed|"
    r"edited|created|wrote|clicked|navigated|started|stopped|restarted|checked|looked at|"
    r"inspected|cat'?ed|cd'?d|printed|scrolled|loaded|downloaded|uploaded)\b",
    re.IGNORECASE,
)
# A sentence stating how things are (not just what was done) may hold an insight.
_STATE_RE = re.compile(
    r"\b(?:is|are|was|were|be|been|can|could|may|might|will|would|causes?|caused|means?|meant|"
    r"needs?|requires?|required|depends?|happens?|happened|leads? to|led to|results? in)\b",
    re.IGNORECASE,
)
_LOG_LINE_RE = re.compile(
    r"^(?:\[?\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}|\[?\d{2}:\d{2}(?::\d{2})?\]?\s|"
    r"\[?(?:info|debug|warn|warning|error|trace|fatal|critical)\]?[:\s]|\$ |> |>>> |"
    r"tool[_ ]?(?:call|use|result)\b|\{\"(?:ts|time|timestamp|event|level)\")",
    re.IGNORECASE,
)
_SIGNATURE_RE = re.compile(
    r"^(?:(?:async )?def |class |function |func |fn |pub fn |public |private |protected |"
    r"interface |type \w+ =|const \w+ = |import |from \w[\w.]* import |#include|@\w+)"
    r"|^[\w.]+\([^()]*\)\s*(?:->|:)\s*[\w\[\], |.]+$",
    re.IGNORECASE,
)
# Statements that only appear in code, once indentation is gone.
_CODE_LINE_RE = re.compile(
    r"^(?:return|yield|raise|elif|else:|for \w+ in |while |with |try:|except|finally:|await |"
    r"assert |(?:let|var|const) \w+ =|print\(|echo |select |insert into |update \w+ set |delete from |"
    r"create (?:table|index)|[\w.\[\]\"']+\s*[-+*/|]?=\s*[\w\"'(\[{-])|[;{}]$|^[})\]]",
    re.IGNORECASE,
)
_DOC_RE = re.compile(
    r"\b(?:takes|accepts|expects) (?:an? |the |one |two |three )?(?:\w+ )?(?:arguments?|parameters?|"
    r"args?|params?)\b|\breturns? (?:an? |the )?[\w.`\[\]]+(?: \w+)? (?:object|value|list|dict|tuple|"
    r"string|instance)\b|^(?:parameters|params|args|arguments|returns|raises|yields|usage|"
    r"options|flags|example|examples|signature|attributes)\s*:|\bis (?:defined|declared|"
    r"implemented|located) (?:in|at)\b|\bsignature (?:of|is)\b|"
    r"\b(?:accepts|supports) the following\b|\bthe (?:api|endpoint|function|method|class|"
    r"module|cli|command) (?:is|has|takes|returns|accepts)\b",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence that only reports what a file of the repository says: its subject a path or a
# well-known file, its verb one that reads the file out ("lists", "imports", "says").
# A bare name needs a file's extension: "Node.js includes fetch" names a product, not a file.
_FILE_SAYS_RE = re.compile(
    r"^(?:the )?(?:file |module )?`?(?:[\w.-]+/[\w./-]+|[\w-]+\.(?:json|ya?ml|toml|py|ts|tsx|jsx|"
    r"go|rs|rb|java|kt|md|txt|cfg|ini|lock|sh|sql|xml|gradle|tf|conf|mod|sum)|readme|makefile|"
    r"dockerfile|changelog|license)`?(?: file| module)? (?:lists|says|states|contains|defines|"
    r"declares|imports|exports|documents|describes|specifies|includes)\b",
    re.IGNORECASE,
)
_FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
_HSPACE_RE = re.compile(r"[^\S\n]+")
# The case-insensitive ones read lower-cased ASCII text case-sensitively, where `re` skips
# ahead on literal first characters (memsieve.capture.fastre): same answers, faster. Those
# of common words skip the literal test (it costs more than it spares); the three anchored
# at a line's start stay plain regexes (one try per line is already cheap).
_LESSON, _STATE, _ACTIVITY, _CODE_LINE = (
    fastre.Scan(rx, literals=False) for rx in (_LESSON_RE, _STATE_RE, _ACTIVITY_RE, _CODE_LINE_RE)
)
_RETRO, _DOC = fastre.Scan(_RETRO_RE), fastre.Scan(_DOC_RE)


def _search(scan: fastre.Scan, text: str) -> bool:
    return scan.search(text, fastre.lowered(text))


def normalize(text: str) -> str:
    """NFC, LF line ends, single spaces, stripped lines: the form every rule reads."""
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = (_HSPACE_RE.sub(" ", line).strip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line)


def split_code(text: str) -> tuple[str, str]:
    """(prose, code): fenced blocks and signature-like lines count as code."""
    code = [m.group(0) for m in _FENCE_RE.finditer(text)]
    prose_lines: list[str] = []
    for line in _FENCE_RE.sub("\n", text).split("\n"):
        is_code = _SIGNATURE_RE.match(line) or _search(_CODE_LINE, line)
        (code if is_code else prose_lines).append(line)
    return "\n".join(prose_lines).strip(), "\n".join(code).strip()


@lru_cache(maxsize=4096)
def has_lesson(text: str) -> bool:
    # Cached: trivia() and derivable() ask about the same heading + content.
    return _search(_LESSON, text)


def _sentences(text: str) -> list[str]:
    return [s.strip(" -*•>\t") for s in _SENTENCE_RE.split(text) if s.strip(" -*•>\t")]


def reasoning(heading: str, content: str) -> str | None:
    """Intermediate reasoning: plans and musings with no lesson among them."""
    thinking = lessons = 0
    for sentence in _sentences(heading) + _sentences(content):
        if _search(_RETRO, sentence):
            lessons += 1
        elif _REASONING_RE.match(sentence):
            thinking += 1
        elif has_lesson(sentence):
            lessons += 1
    if thinking and (lessons == 0 or (thinking >= 3 and thinking >= 2 * lessons)):
        return f"reads as intermediate reasoning ({thinking} planning sentences, no lesson)"
    return None


# A thank-you or an "it works" said to the agent: chat, not a lesson (heading and content).
_ACK_RE = re.compile(
    r"(?:(?:many |big )?thanks?(?: you)?(?: (?:so much|a lot|again))?|thx|ty|cheers|great|perfect|"
    r"awesome|nice|cool|ok(?:ay)?|got it|sounds good|lgtm|done|yes|yep|sure|all good|"
    r"that (?:worked|works|did it)|it works(?: now)?|works now|(?:it'?s |it is )?working now)"
    r"(?:[\s!.,:;)\-]|\U0001f44d|\U0001f64f|\U0001f389)*",
    re.IGNORECASE,
)


def _acknowledgement(text: str) -> bool:
    rest = text.strip()
    while rest:
        m = _ACK_RE.match(rest)
        if m is None or not m.group(0):
            return False
        rest = rest[m.end() :].lstrip()
    return True


def trivia(heading: str, content: str) -> str | None:
    """Session trivia: raw log lines or a recap of what the agent did, with no lesson."""
    if _acknowledgement(content) and _acknowledgement(heading):
        return "an acknowledgement said to the agent, not a lesson"
    lines = content.split("\n")
    log_lines = [line for line in lines if _LOG_LINE_RE.match(line)]
    if len(lines) >= 2 and 2 * len(log_lines) >= len(lines):
        rest = "\n".join(line for line in lines if not _LOG_LINE_RE.match(line))
        if not has_lesson(heading + "\n" + rest):
            return f"raw event log ({len(log_lines)} of {len(lines)} lines are log entries)"
        return None
    if has_lesson(heading + "\n" + content):
        return None
    if log_lines:
        return "a log entry, not a lesson"
    sentences = _sentences(content)
    if any(_search(_STATE, s) for s in sentences):
        return None
    if any(_search(_ACTIVITY, s) for s in sentences):
        return "a record of what the agent did, not a lesson"
    return None


def derivable(heading: str, content: str) -> str | None:
    """Pasted code, API signatures or docs, with no lesson in the surrounding prose."""
    prose, code = split_code(content)
    # Lesson words count outside fenced blocks, also on code-like lines: a one-line
    # "MEMSIEVE_SWEEP=30 fixed it" is a lesson.
    if has_lesson(heading + "\n" + _FENCE_RE.sub("\n", content)):
        return None
    if code and len(code) >= len(prose):
        return "pasted code or signatures with no lesson; the repo already holds them"
    if _search(_DOC, prose) or _search(_DOC, heading):
        return "restates API docs with no lesson; the docs already hold it"
    said = _sentences(prose)
    if said and all(_FILE_SAYS_RE.match(s) for s in said):
        return "restates what a file of the repository says, with no lesson; the repo holds it"
    return None
