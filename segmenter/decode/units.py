"""Units a boundary never falls inside: addresses, handles, numbers, paths, code spans, emoji sequences.

A model reads "Jane.Doe@example.com" as the words "Jane", ".", "Doe" and may propose a boundary after
the period; it reads "+1 (555) 010-2000" as three words and may cut before "010-2000". The decoder
(`segmenter.decode.decoder`) asks `inside_unit(text, at)` of every boundary it would make and drops
those that fall strictly inside one of these units (a boundary right after a unit stays possible:
"... at www.example.com. Then"):

- `url`: "scheme://..." or "www. ..." up to the last character that is not closing punctuation;
- `email`: "name@host.tld";
- `handle` and `hashtag`: "@mira", "#running", "#412";
- `phone`: "+1 (555) 010-2000", "(030) 1234 5678", "+44 20 7946 0958";
- `number`: digits joined by single separators, "1,234.56", "2024-06-03", "12:30", "3/4", "3.12.1",
  with a "v" before and a suffix after ("v2.1.3", "1.0.0-rc1"), and "10 000" (groups of three);
- `path`: "/etc/app.conf", "~/notes.md", "./run.sh", "C:\\Users\\me\\a.txt", "src/segmenter/api.py";
- `attribution`: the end of an e-mail's attribution line, "<jo@example.org> wrote:", "Jones writes:"
  (a model reads the ">" of an address as a closing bracket and cuts before "wrote"), and the whole
  line (or two) from its "On"/"Il"/"Am" ... to "wrote:" ("On Tue, Mar 11, 2025 at 10:02 AM Jo
  Whitfield <jo@example.org> wrote:");
- `mail header`: an e-mail header field's name and the first character of its value ("Subject: H",
  "Ämne: [");
- `file name`: a name with a common extension ("install.sh", "setup.cfg", "libfoo.so");
- `abbreviation`: letters and periods in turn, "Ph.D.", "e.g.", "U.S.", "p.m." (the last period may
  still end a sentence);
- `code span` and `link` in markdown: "`x = f(a, b)`", "[the docs](https://example.org/docs)"; a
  span never runs over a TeX closing quote, so "``Yes,'' he said. ``No.''" holds no code span;
- `addressed handle`: a handle that opens a line or a chat message, with the first character after
  it ("@maya_k y": a reply addresses someone, it does not end a sentence);
- `closing hashtags`: hashtags that end a line, with the character before them ("r #nospoilers");
- `html tag`: an inline tag with the character it touches, '<span class="term">P', 'e</span>';
- `citation`: "§ 12(3)", "§§ 4-6", "123 F.3d 456", "410 U.S. 113";
- `header`: a chat or transcript line's header through the first character said ("ubuntu 2009-10-20
  [14:29] <ogra> paulliu: W", "speaker 1: n", "[00:01:23] A: s"), read at the line's start, and
  the gap after an addressee without a colon ("<brophat> sethk I have", where "<sethk>" speaks nearby);
- `grapheme`: a user-perceived character of several code points (an emoji ZWJ sequence "👩‍💻", a skin
  tone "👍🏽", a flag "🇪🇺", a keycap "1️⃣", a letter with combining marks), read by `splits_grapheme`.

`unit_spans` finds the units of a stretch of text in one scan (the decoder reads each stretch once, as
its text arrives); `inside_unit` asks about one offset, reading RUN_MAX characters on each side.
This module only reads text; it knows nothing of probabilities.
"""

from __future__ import annotations

import re
import unicodedata

from segmenter.text.line_headers import HEADER

RUN_MAX = 256  # characters read on each side of `at`, within its line

_CLOSING = r"[^\s.,;:!?'\"\u2019\u201d)\]}>]"  # the last character of an address or a path
_PATTERNS = {
    "url": rf"(?<![A-Za-z0-9+.-])(?:[A-Za-z][A-Za-z0-9+.-]{{0,31}}://|www\.)\S*{_CLOSING}",
    "email": r"(?<![\w.+%-])[\w+%-][\w.+%-]*@[\w-]+(?:\.[\w-]+)+",
    "addressed handle": r"(?:(?<![^\n\r])[ \t]*|(?<=> )|(?<=: ))@\w+(?:[.-]\w+)*:?[ \t]+\S",
    "handle": r"(?<![\w@])@\w+(?:[.-]\w+)*",
    "hashtag": r"(?<![\w&#])#\w+",
    "phone": (
        r"(?<![\w+])(?:\+\d{1,4}[ .-]?)?\(\d{1,5}\)[ .-]?\d{2,5}(?:[ .-]\d{2,5}){0,3}(?!\w)"
        r"|(?<![\w+])\+\d{1,4}(?:[ .-]\d{1,5}){1,5}(?!\w)"
    ),
    "number": (
        r"(?<![\w.,])[vV]?\d+(?:[.,:/-]\d+)+(?:[-+][A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*)?(?!\w)"
        r"|(?<![\w.,])\d{1,3}(?: \d{3})+(?![\w,.]\d)"
    ),
    "path": (
        r"(?<![\w/~.])(?:[A-Za-z]:\\|~?/|\.{1,2}/)[^\s]*[\w/]"
        r"|(?<![\w/~.-])[\w.-]*\w(?:/[\w.-]+)+(?<=\w)"
    ),
    "file name": (
        r"(?<![\w.-])[\w-]+(?:\.[\w-]+)*\.(?:sh|py|js|ts|json|ya?ml|toml|txt|md|rst|html?|css|c|h|cpp|go|rs"
        r"|java|rb|php|pl|conf|cfg|ini|log|csv|xml|pdf|png|jpe?g|gif|zip|gz|tar|deb|rpm|exe|dll|so|iso)(?!\w)"
    ),
    "attribution": (
        r"(?<!\S)\S+\s+(?:wrote|writes|ha scritto|a écrit|schrieb|escribió|schreef)\s?:"
        r"|(?<![^\n\r> \t])(?:On|Il|Em|Am|Le|El|Op) [^\n\r]{4,160}?(?:\r?\n[^\n\r]{1,120}?)?"
        r"(?:wrote|writes|ha scritto|a écrit|schrieb|escribió|escreveu|schreef|het volgende geschreven)\s?:"
    ),
    "mail header": (
        r"(?<![^\n\r])(?:From|To|Cc|Bcc|Subject|Date|Sent|Reply-To|Von|An|Betreff|Datum|Gesendet|De|Para"
        r"|Asunto|Fecha|Objet|Envoyé|Från|Till|Ämne|Skickat|Oggetto|Inviato|Da|Onderwerp|Aan|Van):[ \t]+\S"
    ),
    "abbreviation": r"(?<![\w.])[A-Za-z]{1,3}(?:\.[A-Za-z]{1,3})+\.?",
    "code span": r"(?<!`)(`{1,3})(?!`)(?:(?!'')[^`\n])+?(?<!`)\1(?!`)",  # not over a TeX quote's ''"
    "link": r"\[[^\[\]\n]{1,200}\]\([^()\s]{1,500}\)",
    "closing hashtags": r"\S[ \t]+#\w+(?:[ \t]+#\w+)*[ \t]*(?=[\n\r]|$)",
    "html tag": r"<[A-Za-z][\w-]{0,31}(?:\s[^<>\n]{0,200})?>\S|\S</[A-Za-z][\w-]{0,31}>",
    "citation": (
        r"(?<!§)§{1,2}\s?\d[\w.-]*(?:\([\w]{1,4}\))*"
        r"|(?<!\w)\d{1,4} (?:[A-Z][A-Za-z]{0,4}\.){1,3}(?: ?\d?[a-z]{1,3}\.?)? \d{1,5}(?!\w)"
    ),
}
_UNIT = re.compile("|".join(f"(?:{pattern})" for pattern in _PATTERNS.values()))

# a chat or transcript line's header through the first character said (`segmenter.text.line_headers`)
LINE_HEADER = re.compile(HEADER + r"\S")
_FIRST_WORD = re.compile(r"([\w.-]{2,32})[ \t]+")  # a chat line's first word, and the space after it

_ZWJ = "\u200d"
_EXTENDERS = "\u200d\ufe0e\ufe0f\u20e3"  # joiner, variation selectors, keycap
_SKIN_TONES = range(0x1F3FB, 0x1F400)
_TAGS = range(0xE0020, 0xE0080)
_REGIONAL = range(0x1F1E6, 0x1F200)


def inside_unit(text: str, at: int) -> bool:
    """Whether a boundary at offset `at` (the first character after it) falls strictly inside a unit.

    >>> text = "Call +1 (555) 010-2000 or see /etc/app.conf, e.g. v2.1.3. Then mail jo@example.org."
    >>> [inside_unit(text, text.index(s)) for s in ("(555)", "010", "app", "g.", "1.3", "Then", "example")]
    [True, True, True, True, True, False, True]
    """
    if at <= 0 or at >= len(text):
        return False
    if splits_grapheme(text, at) or inside_header(text, at):
        return True
    start = max(at - RUN_MAX, 0)
    spans, _ = unit_spans(text, start, min(at + RUN_MAX, len(text)), at)
    return any(a < at < b for a, b in spans)


def unit_spans(text: str, start: int, stop: int, before: int) -> tuple[list[tuple[int, int]], int]:
    """The (start, end) of every unit matched in text[start:stop] that starts before `before`, and
    where to go on looking (past the last of them, or `before`): one scan of the text, so a decoder
    that asks as its text arrives reads each character a bounded number of times."""
    spans, resume = [], before
    for match in _UNIT.finditer(text, start, stop):
        if match.start() >= before:
            break
        spans.append((match.start(), match.end()))
        resume = max(resume, match.end())
    return spans, resume


def inside_header(text: str, at: int) -> bool:
    """Whether `at` falls inside the header of its line (`LINE_HEADER`), read where the line starts at
    most RUN_MAX characters before `at`."""
    floor = max(at - RUN_MAX, 0)
    line_start = max(text.rfind("\n", floor, at), text.rfind("\r", floor, at)) + 1
    if line_start == 0 and floor > 0:
        return False  # the line starts further back: no header reaches this far
    header = LINE_HEADER.match(text, line_start, min(line_start + RUN_MAX, len(text)))
    if header is None:
        return False
    if at < header.end():
        return True
    return _after_addressee(text, header.end() - 1, at)


def _after_addressee(text: str, said: int, at: int) -> bool:
    """Whether `at` starts the word after a chat line's first word (at `said`) that names someone the
    log shows speaking within RUN_MAX characters ("<sethk>"): "<brophat> sethk I have ..." addresses
    sethk, so no boundary after the name."""
    name = _FIRST_WORD.match(text, said, min(said + RUN_MAX, len(text)))
    if name is None or name.end() != at or text[said - 1] not in " \t" or "<" not in text[:said]:
        return False
    nearby = text[max(said - RUN_MAX, 0) : min(at + RUN_MAX, len(text))]
    return f"<{name.group(1)}>" in nearby


def splits_grapheme(text: str, at: int) -> bool:
    """Whether `at` falls inside a grapheme cluster: before a combining mark, a joiner, a variation
    selector, a skin tone or a tag character, after a joiner, or between the two halves of a flag.

    >>> splits_grapheme("a 👍🏽", 3), splits_grapheme("🇪🇺🇩🇪", 1), splits_grapheme("🇪🇺🇩🇪", 2)
    (True, True, False)
    """
    char, before = text[at], text[at - 1]
    code = ord(char)
    if before == _ZWJ or char in _EXTENDERS or code in _SKIN_TONES or code in _TAGS:
        return True
    if unicodedata.category(char).startswith("M"):
        return True
    if code in _REGIONAL and ord(before) in _REGIONAL:
        run = 0  # regional indicators before `at`: an odd count means `at` completes a flag
        while at - run - 1 >= 0 and ord(text[at - run - 1]) in _REGIONAL:
            run += 1
        return run % 2 == 1
    return False
