"""One exception family for everything the segmenter can refuse to do.

Every message says what went wrong and what to do about it, in one line, so the CLI can print it as is.
This module holds no logic beyond the class hierarchy.
"""

from __future__ import annotations


class SegmenterError(Exception):
    """Base class: anything the library raises on purpose derives from this."""


class ConfigError(SegmenterError, ValueError):
    """A configuration value is out of range or inconsistent."""


class ModelNotFoundError(SegmenterError):
    """The backbone named by `model=` cannot be found locally (and may not be downloaded)."""


class UnsupportedModelError(SegmenterError):
    """The backbone loaded, but it is not a BERT-family encoder whose heads we can read."""


class ProbeError(SegmenterError):
    """A probe file is missing, corrupted, or was trained for another backbone or layer set."""


class InputError(SegmenterError):
    """Input text could not be read (missing file, directory, undecodable bytes, binary data)."""


class MissingExtraError(SegmenterError, ImportError):
    """A feature needs a library of an optional part (a pip extra) that is not installed; the message names
    the extra and the command that installs it (`segmenter.extras`)."""
