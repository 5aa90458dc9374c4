"""Tesseract OCR (extra ``ocr``): the one module importing tesserocr, Pillow and lingua.

Why tesserocr rather than pytesseract: it runs Tesseract in-process with the model loaded once
(pytesseract starts the ``tesseract`` program and reloads the model on every call, about half
a second each, and writes a temporary file), gives word confidences and orientation/script
detection directly, and its wheel bundles libtesseract, so only the language data comes from
Debian (``tesseract-ocr-eng``, ``-osd``, ``-deu`` ...: ``make system``).

``TesseractOCR(languages=("eng", "deu"))`` keeps one Tesseract instance for recognition and one
for orientation and script detection (OSD), behind a lock (a Tesseract instance is not
thread-safe). Each ``recognize(data)`` gives an ``OcrResult``:

- ``text``, ``confidence`` (Tesseract's mean word confidence, 0-1) and ``word_confidences``;
- ``orientation``: the rotation OSD found (0, 90, 180, 270 degrees); a rotated page is read
  both ways and the reading with the higher confidence kept;
- ``script``: OSD's script (``Latin``, ``Cyrillic``, ...). OSD refuses short texts ("Too few
  characters"), so then the script is taken from the characters recognized (``script_source``
  says which);
- ``language``: ISO 639-1 code of the text by lingua, offline and deterministic, among
  ``detect`` (by default the languages read plus English, German, French, Spanish, Italian,
  Portuguese and Dutch: a restricted set keeps memory small); ``None`` for fewer than
  ``min_words`` words or when lingua cannot tell.
"""

from __future__ import annotations

import io
import os
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from msgwire.errors import MissingExtraError, ResourceError

try:
    import tesserocr  # type: ignore[import-untyped]  # no stubs
    from lingua import IsoCode639_1, IsoCode639_3, Language, LanguageDetector, LanguageDetectorBuilder
    from PIL import Image, ImageOps
except ImportError as exc:
    raise MissingExtraError("msgwire's OCR (TesseractOCR)", "ocr", exc) from None

__all__ = ["DEBIAN_TESSDATA", "OcrResult", "TesseractOCR"]

DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"
_DEFAULT_DETECT = ("en", "de", "fr", "es", "it", "pt", "nl")
# Tesseract's script names for the Unicode script words of character names
_SCRIPTS = {
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari",
    "THAI": "Thai",
    "HANGUL": "Hangul",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "CJK": "Han",
}


class OcrResult(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    confidence: float
    """Mean word confidence, 0-1 (Tesseract's 0-100 divided by 100)."""
    word_confidences: list[float] = msgspec.field(default_factory=list)
    orientation: int = 0
    script: str | None = None
    script_source: Literal["osd", "characters"] | None = None
    language: str | None = None


class TesseractOCR:
    """Tesseract in-process (see the module docs). ``close()`` (or ``with``) frees the models."""

    def __init__(
        self,
        languages: Sequence[str] = ("eng",),
        *,
        tessdata: str | None = None,
        detect: Sequence[str] | None = None,
        min_words: int = 2,
    ) -> None:
        self.languages = tuple(languages)
        self.tessdata = tessdata or os.environ.get("TESSDATA_PREFIX") or DEBIAN_TESSDATA
        self.min_words = min_words
        codes = list(detect) if detect is not None else [*_iso1(self.languages), *_DEFAULT_DETECT]
        self._detect = tuple(dict.fromkeys(codes))
        self._lock = threading.Lock()
        self._api: Any = None
        self._osd: Any = None
        self._detector: LanguageDetector | None = None

    def __enter__(self) -> TesseractOCR:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for api in (self._api, self._osd):
                if api is not None:
                    api.End()
            self._api = self._osd = None

    def recognize(self, data: bytes) -> OcrResult:
        """The text of an image (PNG, JPEG, GIF, WebP bytes); raises ``ResourceError`` when the
        image cannot be decoded or Tesseract cannot start (its data missing)."""
        image = _decode(data)
        with self._lock:
            self._start()
            orientation, script = self._orientation(image)
            text, confidence, words = self._read(image)
            if orientation:
                # OSD says the page is turned: read it turned back too, keep the surer reading
                turned = self._read(image.rotate(orientation, expand=True, fillcolor=255))
                if turned[1] > confidence:
                    text, confidence, words = turned
                else:
                    orientation = 0
        text = text.strip()
        source: Literal["osd", "characters"] | None = "osd" if script else None
        if script is None and (script := _script_of(text)) is not None:
            source = "characters"
        return OcrResult(
            text=text,
            confidence=confidence,
            word_confidences=words,
            orientation=orientation,
            script=script,
            script_source=source,
            language=self._language(text),
        )

    # --- steps ----------------------------------------------------------------------------------

    def _start(self) -> None:
        if self._api is not None:
            return
        found = _available(self.tessdata)
        missing = [lang for lang in (*self.languages, "osd") if lang not in found]
        if missing:
            packages = ", ".join(f"tesseract-ocr-{lang}" for lang in missing)
            raise ResourceError(
                f"Tesseract language data {missing} not found in {self.tessdata!r} (install {packages})"
            )
        lang = "+".join(self.languages)
        try:
            self._api = tesserocr.PyTessBaseAPI(path=self.tessdata, lang=lang, psm=tesserocr.PSM.AUTO)
            self._osd = tesserocr.PyTessBaseAPI(path=self.tessdata, lang="osd", psm=tesserocr.PSM.OSD_ONLY)
        except RuntimeError as exc:
            self._api = self._osd = None
            raise ResourceError(f"Tesseract could not start ({lang} in {self.tessdata!r}): {exc}") from None

    def _orientation(self, image: Image.Image) -> tuple[int, str | None]:
        # a separate OSD-only instance: asking the recognition instance for OSD aborts the
        # process in libtesseract 5.5 with Debian's osd data (std::out_of_range)
        self._osd.SetImage(image)
        found = self._osd.DetectOrientationScript()
        if not found:  # too few characters to tell
            return 0, None
        return int(found["orient_deg"]) % 360, (found["script_name"] or None) if found["script_conf"] > 0 else None

    def _read(self, image: Image.Image) -> tuple[str, float, list[float]]:
        self._api.SetImage(image)
        text = self._api.GetUTF8Text()
        words = [c / 100 for c in self._api.AllWordConfidences()]
        return text, self._api.MeanTextConf() / 100, words

    def _language(self, text: str) -> str | None:
        if sum(any(c.isalpha() for c in w) for w in text.split()) < self.min_words:
            return None
        if self._detector is None:
            languages = [Language.from_iso_code_639_1(IsoCode639_1.from_str(c)) for c in self._detect]
            self._detector = LanguageDetectorBuilder.from_languages(*languages).build()
        found = self._detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else None


def _decode(data: bytes) -> Image.Image:
    try:
        with Image.open(io.BytesIO(data)) as opened:
            opened.seek(0)  # the first frame of a GIF or an animated WebP
            image = ImageOps.exif_transpose(opened) or opened
            return image.convert("L")
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ResourceError(f"the image cannot be decoded: {exc}") from None


def _available(tessdata: str) -> set[str]:
    try:
        return {n.removesuffix(".traineddata") for n in os.listdir(tessdata) if n.endswith(".traineddata")}
    except OSError:
        return set()


def _iso1(tesseract_languages: Sequence[str]) -> list[str]:
    codes = []
    for lang in tesseract_languages:
        try:
            language = Language.from_iso_code_639_3(IsoCode639_3.from_str(lang))
        except ValueError:  # a Tesseract model that is no language (osd, equ) or lingua lacks
            continue
        codes.append(language.iso_code_639_1.name.lower())
    return codes


def _script_of(text: str) -> str | None:
    """The script most letters of ``text`` are written in, by their Unicode names."""
    counts: Counter[str] = Counter()
    for c in text:
        if c.isalpha():
            word = unicodedata.name(c, "").split(" ")[0]
            if word in _SCRIPTS:
                counts[_SCRIPTS[word]] += 1
    return counts.most_common(1)[0][0] if counts else None
