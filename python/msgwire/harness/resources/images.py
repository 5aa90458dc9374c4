"""Images: sources (url / base64 / path), formats, limits, and recognition (vision / OCR / auto).

Sources: a ``PathSource`` is read from disk through a ``FileResolver``'s roots and permissions
(the one given as ``files``, else one of ``root``, by default the working directory when the
recognizer is made: nothing outside it is read, nor a key or credential file, unless
``allow_any_path=True``); a ``Base64Source`` is decoded strictly; a ``UrlSource``
is a ``data:`` URL or fetched over http(s) with httpx (imported by the first fetch: the extra
``harness``; without it that image fails, naming the extra), at most ``limits.max_bytes`` read, and
refused before any connection when its host resolves to a private, loopback, link-local or
otherwise non-public address (unless ``allow_private_urls``); the connection goes to the address
that was checked (no second DNS answer can swap it), redirects are checked hop by hop.

Formats PNG, JPEG, GIF and WebP, told by their bytes (a declared media type is not trusted);
width and height read from the header, so a decompression bomb is refused before any decoding
(``limits.max_pixels``).

Recognition (``ImageRecognizer.recognize(block)``), by the block's ``recognition_mode``:

- ``ocr``: Tesseract (``ocr.TesseractOCR``, extra ``ocr``): ``recognized_text``, ``confidence``
  (0-1), ``script``, ``language``;
- ``vision``: the image and ``prompt`` go to the ``VisionModel`` handed in, its reply's text is
  the ``vision_analysis`` (description and text);
- ``auto``: vision when the model can see (``vision.sees_images``), else OCR; vision failing
  falls back to OCR. ``notice`` says when vision was unavailable or failed.

Every outcome sets ``status``, ``mode_used``, ``error``, and counts an attempt (``attempts``);
nothing raises. ``retry(block)`` runs a failed block again while ``attempts < max_attempts``.
In a request (the Rust core writes it): an image read by vision goes in the provider's image
format (a path source is inlined as base64 for that, ``inline_paths``), one read by OCR as its
text; confidence, script, language and notice stay internal.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import os
import socket
import struct
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

from msgwire.errors import MissingExtraError, ResourceError
from msgwire.types import (
    AssistantMessage,
    Base64Source,
    ContentBlock,
    ImageBlock,
    Message,
    PathSource,
    TextBlock,
    UrlSource,
    UserMessage,
)

from ._blocks import map_blocks
from .files import FileResolver
from .resolver import Resolver

if TYPE_CHECKING:
    import httpx

    from .ocr import OcrResult

__all__ = [
    "VISION_PROMPT",
    "ImageData",
    "ImageLimits",
    "ImageRecognizer",
    "OCREngine",
    "UrlFetcher",
    "VisionModel",
    "is_public_address",
    "load_image",
    "sniff_image",
]

VISION_PROMPT = (
    "Describe this image in a few sentences, then transcribe every piece of text in it exactly, "
    "line by line, under the heading 'Text:' (write 'Text: none' when there is none)."
)


class ImageLimits(msgspec.Struct, frozen=True, kw_only=True):
    max_bytes: int = 20 << 20
    max_pixels: int = 50_000_000
    """Width times height; refused before decoding (a 100 KB PNG can claim 10 gigapixels)."""


DEFAULT_LIMITS = ImageLimits()


class ImageData(msgspec.Struct, frozen=True, kw_only=True):
    data: bytes
    media_type: str
    width: int
    height: int

    def base64(self) -> Base64Source:
        return Base64Source(media_type=self.media_type, data=base64.b64encode(self.data).decode("ascii"))


@runtime_checkable
class VisionModel(Protocol):
    """A multimodal model, as the agent hands it in (the providers adapt to this; see docs/guide/resources.md).

    ``sees_images``: whether the model takes images (the providers' capability table).
    ``analyze(message)``: one model call answering ``message`` (the prompt and the image, as a
    ``Base64Source``), returning the model's reply; raising is a failed attempt."""

    @property
    def sees_images(self) -> bool: ...

    def analyze(self, message: UserMessage) -> AssistantMessage: ...


class OCREngine(Protocol):
    """What recognizes text in image bytes (``ocr.TesseractOCR``); raising is a failed attempt."""

    def recognize(self, data: bytes) -> OcrResult: ...


# --- formats ------------------------------------------------------------------------------------


def sniff_image(data: bytes) -> tuple[str, int, int]:
    """``(media_type, width, height)`` from the bytes of a PNG, JPEG, GIF or WebP image;
    raises ``ResourceError`` for anything else or a header too short to tell."""
    try:
        if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return "image/png", width, height
        if data[:6] in (b"GIF87a", b"GIF89a"):
            width, height = struct.unpack("<HH", data[6:10])
            return "image/gif", width, height
        if data.startswith(b"\xff\xd8\xff"):
            return ("image/jpeg", *_jpeg_size(data))
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return ("image/webp", *_webp_size(data))
    except struct.error:
        raise ResourceError("the image is truncated (its header is incomplete)") from None
    kind = "BMP" if data[:2] == b"BM" else "TIFF" if data[:4] in (b"II*\x00", b"MM\x00*") else "not an image"
    raise ResourceError(f"unsupported image format ({kind}): PNG, JPEG, GIF and WebP are supported")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            i += 1
            continue
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            i += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # start of frame
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return width, height
        i += 2 + length
    raise struct.error("no frame header")


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        (bits,) = struct.unpack("<I", data[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    raise struct.error("unknown WebP chunk")


def _checked(data: bytes, limits: ImageLimits) -> ImageData:
    if len(data) > limits.max_bytes:
        raise ResourceError(f"the image is {len(data):,} bytes, over the limit of {limits.max_bytes:,}")
    media_type, width, height = sniff_image(data)
    if width * height > limits.max_pixels:
        raise ResourceError(f"the image is {width}x{height} pixels, over the limit of {limits.max_pixels:,}")
    if width == 0 or height == 0:
        raise ResourceError(f"the image is {width}x{height} pixels: empty")
    return ImageData(data=data, media_type=media_type, width=width, height=height)


# --- fetching URLs ------------------------------------------------------------------------------


def is_public_address(address: str) -> bool:
    """Whether an IP address is one a fetch may reach by default: globally routable, not
    loopback, private, link-local (cloud metadata at 169.254.169.254), multicast or reserved;
    IPv4-mapped IPv6 addresses are judged by their IPv4 address."""
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class UrlFetcher:
    """GET an image URL with httpx: size-limited, SSRF-checked (see the module docs)."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        max_bytes: int = DEFAULT_LIMITS.max_bytes,
        timeout: float = 10.0,
        max_redirects: int = 3,
        resolve: Callable[[str, int], list[str]] | None = None,
    ) -> None:
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self._resolve = resolve or _addresses
        self.timeout = timeout
        self._client: httpx.Client | None = None  # made by the first fetch (httpx: the extra "harness")

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def fetch(self, url: str) -> bytes:
        """The body of ``url``; raises ``ResourceError`` (refused address, HTTP error, too large),
        ``MissingExtraError`` without httpx."""
        try:
            import httpx  # here only: an image from a path or base64 needs none
        except ImportError as exc:
            raise MissingExtraError("fetching an image URL", "harness", exc) from None
        if self._client is None:
            # trust_env=False: a proxy from the environment would connect by name, around the check
            self._client = httpx.Client(timeout=self.timeout, trust_env=False, follow_redirects=False)
        for _ in range(self.max_redirects + 1):
            target = httpx.URL(url)
            if target.scheme not in ("http", "https") or not target.host:
                raise ResourceError(f"unsupported URL {url!r}: http, https and data URLs are supported")
            port = target.port or (443 if target.scheme == "https" else 80)
            address = self._address(target.host, port)
            pinned = target.copy_with(host=address)
            extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
            host_header = target.netloc.decode("ascii")
            try:
                with self._client.stream(
                    "GET", pinned, headers={"Host": host_header}, extensions=extensions
                ) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = str(target.join(response.headers["location"]))
                        continue
                    if response.status_code != 200:
                        raise ResourceError(f"HTTP {response.status_code} fetching {_shown(target)}")
                    return self._body(response, target)
            except httpx.HTTPError as exc:
                raise ResourceError(f"fetching {_shown(target)} failed: {exc}") from None
        raise ResourceError(f"more than {self.max_redirects} redirects fetching the image")

    def _address(self, host: str, port: int) -> str:
        try:
            addresses = self._resolve(host, port)
        except OSError as exc:
            raise ResourceError(f"cannot resolve {host!r}: {exc}") from None
        if not addresses:
            raise ResourceError(f"cannot resolve {host!r}")
        if not self.allow_private:
            refused = [a for a in addresses if not is_public_address(a)]
            if refused:
                raise ResourceError(
                    f"refused to fetch from {host!r}: it resolves to a non-public address ({refused[0]}); "
                    "allow_private_urls=True allows it"
                )
        return addresses[0]

    def _body(self, response: httpx.Response, target: httpx.URL) -> bytes:
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            raise ResourceError(f"{_shown(target)} is {int(declared):,} bytes, over the limit of {self.max_bytes:,}")
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > self.max_bytes:
                raise ResourceError(f"{_shown(target)} is over the limit of {self.max_bytes:,} bytes")
        return bytes(body)


def _addresses(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _shown(url: httpx.URL) -> str:
    """A URL for a message: no query (it may hold a token)."""
    return str(url.copy_with(query=None, fragment=None))


def _data_url(url: str) -> bytes:
    header, _, payload = url.partition(",")
    if not header.endswith(";base64"):
        return urllib.parse.unquote_to_bytes(payload)
    return _b64(payload)


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ResourceError("the image's base64 data is not valid base64") from None


def load_image(
    block: ImageBlock,
    *,
    limits: ImageLimits = DEFAULT_LIMITS,
    fetcher: UrlFetcher | None = None,
    root: Path | None = None,
    files: FileResolver | None = None,
    role: str = "user",
) -> ImageData:
    """The bytes of ``block``'s image, checked (format, size, pixels); raises ``ResourceError``."""
    source = block.source
    if type(source) is Base64Source:
        return _checked(_b64(source.data), limits)
    if type(source) is PathSource:
        return _checked(_read_path(source.path, limits, root, files, role), limits)
    assert type(source) is UrlSource
    if source.url.startswith("data:"):
        return _checked(_data_url(source.url), limits)
    if fetcher is None:
        raise ResourceError("image URLs are not fetched here (no UrlFetcher)")
    return _checked(fetcher.fetch(source.url), limits)


def _read_path(path: str, limits: ImageLimits, root: Path | None, files: FileResolver | None, role: str) -> bytes:
    if files is not None:
        real = files.check(path, role)
    else:
        expanded = Path(os.path.expanduser(path))
        if not expanded.is_absolute():
            if root is None:
                raise ResourceError(f"relative image path {path!r} needs a root, and none is set")
            expanded = root / expanded
        real = expanded
    try:
        size = os.stat(real).st_size
        if not real.is_file():
            raise ResourceError(f"{path!r} is not a regular file")
        if size > limits.max_bytes:
            raise ResourceError(f"the image is {size:,} bytes, over the limit of {limits.max_bytes:,}")
        return real.read_bytes()
    except FileNotFoundError:
        raise ResourceError(f"image file not found: {path!r}") from None
    except OSError as exc:
        raise ResourceError(f"cannot read {path!r}: {exc.strerror or exc}") from None


# --- recognition --------------------------------------------------------------------------------


class ImageRecognizer(Resolver):
    """Fills ``ImageBlock``s (see the module docs). ``ocr=None`` starts Tesseract
    (``ocr.TesseractOCR()``) on first use; ``vision=None`` means no model can see."""

    def __init__(
        self,
        *,
        vision: VisionModel | None = None,
        ocr: OCREngine | None = None,
        root: str | os.PathLike[str] | None = None,
        files: FileResolver | None = None,
        limits: ImageLimits = DEFAULT_LIMITS,
        allow_private_urls: bool = False,
        max_attempts: int = 3,
        prompt: str = VISION_PROMPT,
        inline_paths: bool = True,
        allow_any_path: bool = False,
    ) -> None:
        self.vision = vision
        self._ocr = ocr
        self.root = Path(os.path.abspath(root)) if root is not None else None
        if files is None and not allow_any_path:  # image paths stay where file references do
            files = FileResolver(self.root)
        self.files = files
        self.limits = limits
        self.max_attempts = max_attempts
        self.prompt = prompt
        self.inline_paths = inline_paths
        self.fetcher = UrlFetcher(allow_private=allow_private_urls, max_bytes=limits.max_bytes)

    def close(self) -> None:
        self.fetcher.close()
        closing = getattr(self._ocr, "close", None)
        if closing is not None:
            closing()

    def recognize(self, block: ImageBlock, role: str = "user") -> ImageBlock:
        """``block`` recognized by its mode; never raises."""
        attempts = block.attempts + 1
        try:
            image = load_image(
                block, limits=self.limits, fetcher=self.fetcher, root=self.root, files=self.files, role=role
            )
        except (ResourceError, MissingExtraError) as exc:
            return _failed(block, attempts, str(exc))
        mode = block.recognition_mode
        sees = self.vision is not None and self.vision.sees_images
        if mode == "vision" and not sees:
            return _failed(block, attempts, "vision was asked for, but no model that can see images is configured")
        notice = None
        if mode != "ocr" and sees:
            try:
                return self._by_vision(block, image, attempts)
            except Exception as exc:  # the provider's failure, whatever it is, is this attempt's
                if mode == "vision":
                    return _failed(block, attempts, f"vision failed: {_why(exc)}")
                notice = f"vision failed ({_why(exc)}); the image was read with OCR instead"
        elif mode == "auto":
            notice = "vision unavailable: the model cannot see images; the image was read with OCR instead"
        try:
            result = self._engine().recognize(image.data)
        except Exception as exc:  # Tesseract missing or failing, the image undecodable
            return _failed(block, attempts, f"OCR failed: {_why(exc)}", notice)
        return msgspec.structs.replace(
            block,
            status="resolved",
            error=None,
            mode_used="ocr",
            recognized_text=result.text,
            confidence=round(result.confidence, 4),
            script=result.script,
            language=result.language,
            notice=notice if result.text else _join(notice, "no text was found in the image"),
            attempts=attempts,
        )

    def retry(self, block: ImageBlock, role: str = "user") -> ImageBlock:
        """A failed block recognized again, while ``attempts < max_attempts``; else unchanged
        but for a notice saying it was given up. Any other block is returned as it is."""
        if block.status != "error":
            return block
        if block.attempts >= self.max_attempts:
            return msgspec.structs.replace(block, notice=f"given up after {block.attempts} attempts")
        return self.recognize(block, role)

    def resolve_message(self, message: Message, role: str = "user") -> Message:
        """``message`` with its pending images recognized (the same object when it has none)."""
        return map_blocks(message, lambda b: self.recognize(b, role) if type(b) is ImageBlock and pending(b) else b)

    def audit_record(self, block: ContentBlock, /) -> dict[str, Any] | None:
        if type(block) is not ImageBlock:
            return None
        return {"type": "image", "mode_used": block.mode_used, "status": block.status, "error": block.error}

    def _by_vision(self, block: ImageBlock, image: ImageData, attempts: int) -> ImageBlock:
        assert self.vision is not None
        ask = UserMessage(content=[TextBlock(text=self.prompt), ImageBlock(source=image.base64(), status="resolved")])
        reply = self.vision.analyze(ask)
        if reply.stop_reason in ("error", "content_filter", "refusal"):
            raise ResourceError(f"the model stopped with {reply.stop_reason}")
        if not reply.text.strip():
            raise ResourceError("the model's reply has no text")
        source = block.source
        if self.inline_paths and type(source) is PathSource:
            source = image.base64()
        return msgspec.structs.replace(
            block,
            source=source,
            status="resolved",
            error=None,
            mode_used="vision",
            vision_analysis=reply.text.strip(),
            attempts=attempts,
        )

    def _engine(self) -> OCREngine:
        if self._ocr is None:
            try:
                from .ocr import TesseractOCR  # the extra "ocr"; its absence fails this attempt only
            except MissingExtraError as exc:
                raise ResourceError(str(exc)) from None
            self._ocr = TesseractOCR()
        return self._ocr


def pending(block: ImageBlock) -> bool:
    """Not recognized yet: pending with no result (an older document may hold a result with the
    default status)."""
    return (
        block.status == "pending"
        and block.recognized_text is None
        and block.vision_analysis is None
        and block.error is None
    )


def _failed(block: ImageBlock, attempts: int, error: str, notice: str | None = None) -> ImageBlock:
    return msgspec.structs.replace(block, status="error", error=error, attempts=attempts, notice=notice)


def _why(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ResourceError) else f"{type(exc).__name__}: {exc}"


def _join(first: str | None, second: str) -> str:
    return f"{first}; {second}" if first else second
