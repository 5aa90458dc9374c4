"""Images: formats and limits, URL fetching (a real server on 127.0.0.1), OCR with the real
Tesseract, vision against a scripted local model server, auto mode, failures and retry."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from msgwire import AssistantMessage, Base64Source, ImageBlock, PathSource, UrlSource, formats, user
from msgwire.errors import ResourceError
from msgwire.harness.resources import (
    FileResolver,
    ImageLimits,
    ImageRecognizer,
    is_public_address,
    load_image,
    sniff_image,
)
from msgwire.harness.resources.ocr import TesseractOCR
from tests._support.images import ENGLISH, GERMAN, HttpVision, render, scripted_model, serving, words


@pytest.fixture(scope="module")
def ocr() -> Iterator[TesseractOCR]:
    with TesseractOCR(("eng", "deu")) as engine:
        yield engine


def b64(data: bytes, media_type: str = "image/png") -> Base64Source:
    return Base64Source(media_type=media_type, data=base64.b64encode(data).decode())


# --- formats and limits -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "media_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")]
)
def test_formats_are_told_by_their_bytes(fmt: str, media_type: str) -> None:
    data = render(["Hello"], fmt=fmt)
    with Image.open(io.BytesIO(data)) as image:
        assert sniff_image(data) == (media_type, image.width, image.height)
    # a wrong declared media type does not matter
    assert load_image(ImageBlock(source=b64(data, "image/png"))).media_type == media_type


def test_lossless_webp_and_extended_webp_sizes() -> None:
    for kwargs in ({"lossless": True}, {"exif": b"Exif\x00\x00"}):
        out = io.BytesIO()
        Image.new("RGB", (123, 45), "white").save(out, "WEBP", **kwargs)
        assert sniff_image(out.getvalue()) == ("image/webp", 123, 45)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"BM" + b"\x00" * 60, "unsupported image format (BMP): PNG, JPEG, GIF and WebP are supported"),
        (b"hello world", "unsupported image format (not an image): PNG, JPEG, GIF and WebP are supported"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "the image is truncated (its header is incomplete)"),
    ],
)
def test_unsupported_and_truncated_images(data: bytes, error: str) -> None:
    with pytest.raises(ResourceError) as failed:
        sniff_image(data)
    assert str(failed.value) == error


def test_size_and_pixel_limits() -> None:
    big = io.BytesIO()
    Image.new("L", (4000, 3000), 255).save(big, "PNG")  # small file, 12 megapixels
    block = ImageBlock(source=b64(big.getvalue()))
    with pytest.raises(ResourceError, match=r"4000x3000 pixels, over the limit of 10,000,000"):
        load_image(block, limits=ImageLimits(max_pixels=10_000_000))
    with pytest.raises(ResourceError, match=r"over the limit of 100$"):
        load_image(block, limits=ImageLimits(max_bytes=100))
    assert load_image(block).width == 4000


def test_bad_base64_and_data_urls() -> None:
    with pytest.raises(ResourceError, match="not valid base64"):
        load_image(ImageBlock(source=Base64Source(media_type="image/png", data="***")))
    png = render(["Hi"])
    data_url = "data:image/png;base64," + base64.b64encode(png).decode()
    assert load_image(ImageBlock(source=UrlSource(url=data_url))).data == png


def test_paths_go_through_the_file_resolver(tmp_path: Path) -> None:
    (tmp_path / "scan.png").write_bytes(render(["Hi"]))
    (tmp_path / "key.pem").write_bytes(render(["Hi"]))
    files = FileResolver(tmp_path)
    assert load_image(ImageBlock(source=PathSource(path="scan.png")), files=files).media_type == "image/png"
    with pytest.raises(ResourceError, match="permission denied"):
        load_image(ImageBlock(source=PathSource(path="key.pem")), files=files)
    with pytest.raises(ResourceError, match="outside the workspace root"):
        load_image(ImageBlock(source=PathSource(path="../x.png")), files=files)
    with pytest.raises(ResourceError, match="image file not found"):
        load_image(ImageBlock(source=PathSource(path=str(tmp_path / "none.png"))))


def test_a_recognizer_without_files_reads_only_under_its_root(tmp_path: Path, monkeypatch: Any) -> None:
    """As a FileResolver() does: no root given means the working directory, and an image path
    outside it (or a key file inside it) is refused unless allow_any_path=True."""
    outside = tmp_path / "outside.png"
    outside.write_bytes(render(["Hi"]))
    work = tmp_path / "work"
    work.mkdir()
    (work / "id_rsa").write_bytes(render(["Hi"]))
    monkeypatch.chdir(work)
    with TesseractOCR() as ocr:
        contained = ImageRecognizer(ocr=ocr)
        refused = contained.recognize(ImageBlock(source=PathSource(path=str(outside)), recognition_mode="ocr"))
        assert refused.status == "error"
        assert "outside the working directory" in (refused.error or "")
        key = contained.recognize(ImageBlock(source=PathSource(path="id_rsa"), recognition_mode="ocr"))
        assert "permission denied" in (key.error or "")
        anywhere = ImageRecognizer(ocr=ocr, allow_any_path=True)
        read = anywhere.recognize(ImageBlock(source=PathSource(path=str(outside)), recognition_mode="ocr"))
        assert read.status == "resolved"


# --- URLs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("127.8.9.1", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("fe80::1%eth0", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("224.0.0.1", False),
    ],
)
def test_which_addresses_are_public(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def test_url_fetch_refuses_loopback_unless_allowed(ocr: TesseractOCR) -> None:
    png = render(["Invoice total 1234 EUR"])
    with serving(scan__png=(200, {"Content-Type": "image/png"}, png)) as server:
        block = ImageBlock(source=UrlSource(url=server.url + "/scan.png?token=secret"), recognition_mode="ocr")
        refused = ImageRecognizer(ocr=ocr).recognize(block)
        assert refused.status == "error"
        assert refused.error == (
            "refused to fetch from '127.0.0.1': it resolves to a non-public address (127.0.0.1); "
            "allow_private_urls=True allows it"
        )
        assert server.requests == []  # refused before connecting
        localhost = ImageBlock(source=UrlSource(url=server.url.replace("127.0.0.1", "localhost") + "/scan.png"))
        assert "non-public address" in (ImageRecognizer(ocr=ocr).recognize(localhost).error or "")
        allowed = ImageRecognizer(ocr=ocr, allow_private_urls=True).recognize(block)
        assert (allowed.status, allowed.recognized_text, allowed.mode_used) == (
            "resolved",
            "Invoice total 1234 EUR",
            "ocr",
        )
        assert [r[:2] for r in server.requests] == [("GET", "/scan.png?token=secret")]


def test_url_fetch_limits_errors_and_redirects(ocr: TesseractOCR) -> None:
    png = render(["Hello there"])
    with serving(
        scan__png=(200, {}, png),
        moved=(302, {"Location": "/scan.png"}, b""),
        loop=(302, {"Location": "/loop"}, b""),
        gone=(404, {}, b"no"),
    ) as server:
        recognizer = ImageRecognizer(ocr=ocr, allow_private_urls=True, limits=ImageLimits(max_bytes=len(png) - 1))
        too_big = recognizer.recognize(ImageBlock(source=UrlSource(url=server.url + "/scan.png")))
        assert too_big.error == f"{server.url}/scan.png is {len(png):,} bytes, over the limit of {len(png) - 1:,}"
        recognizer = ImageRecognizer(ocr=ocr, allow_private_urls=True)
        assert recognizer.recognize(ImageBlock(source=UrlSource(url=server.url + "/gone"))).error == (
            f"HTTP 404 fetching {server.url}/gone"
        )
        assert recognizer.recognize(ImageBlock(source=UrlSource(url=server.url + "/loop"))).error == (
            "more than 3 redirects fetching the image"
        )
        moved = recognizer.recognize(ImageBlock(source=UrlSource(url=server.url + "/moved")))
        assert moved.recognized_text == "Hello there"


# --- OCR ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "data", "lines", "language"),
    [
        ("sans", render(ENGLISH), ENGLISH, "en"),
        ("serif small", render(ENGLISH, font="DejaVuSerif.ttf", size=20), ENGLISH, "en"),
        ("mono", render(ENGLISH, font="DejaVuSansMono.ttf", size=18), ENGLISH, "en"),
        ("bold large", render(ENGLISH, font="DejaVuSans-Bold.ttf", size=40), ENGLISH, "en"),
        ("jpeg", render(ENGLISH, fmt="JPEG"), ENGLISH, "en"),
        ("german", render(GERMAN), GERMAN, "de"),
        ("rotated", render(ENGLISH, rotate=90), ENGLISH, "en"),
        ("upside down", render(ENGLISH, rotate=180), ENGLISH, "en"),
    ],
)
def test_ocr_reads_rendered_text(ocr: TesseractOCR, name: str, data: bytes, lines: list[str], language: str) -> None:
    block = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(data), recognition_mode="ocr"))
    assert (block.status, block.mode_used, block.error) == ("resolved", "ocr", None), name
    assert words(block.recognized_text or "") == words(" ".join(lines)), name
    assert block.confidence is not None
    assert block.confidence > 0.8
    assert (block.script, block.language) == ("Latin", language)
    assert block.attempts == 1


def test_ocr_on_a_noisy_image_keeps_most_words_at_lower_confidence(ocr: TesseractOCR) -> None:
    clean = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(render(ENGLISH)), recognition_mode="ocr"))
    noisy = ImageRecognizer(ocr=ocr).recognize(
        ImageBlock(source=b64(render(ENGLISH, noise=0.03)), recognition_mode="ocr")
    )
    expected = set(words(" ".join(ENGLISH)))
    found = set(words(noisy.recognized_text or ""))
    assert len(found & expected) >= 0.7 * len(expected)
    assert noisy.confidence is not None
    assert clean.confidence is not None
    assert noisy.confidence < clean.confidence


def test_a_short_text_gets_its_script_from_the_characters(ocr: TesseractOCR) -> None:
    """Tesseract's OSD refuses short texts ("Too few characters"): the script comes from the
    characters read instead, and one word has no language."""
    result = ocr.recognize(render(["Invoice total 1234 EUR"]))
    assert (result.text, result.script, result.script_source) == ("Invoice total 1234 EUR", "Latin", "characters")
    assert ocr.recognize(render(["Hello"])).language is None


def test_an_image_without_text(ocr: TesseractOCR) -> None:
    blank = io.BytesIO()
    Image.new("L", (200, 100), 255).save(blank, "PNG")
    block = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(blank.getvalue()), recognition_mode="ocr"))
    assert (block.status, block.recognized_text, block.notice) == ("resolved", "", "no text was found in the image")


def test_tesseract_missing_fails_the_block_and_retry_is_bounded(tmp_path: Path) -> None:
    recognizer = ImageRecognizer(ocr=TesseractOCR(tessdata=str(tmp_path)), max_attempts=2)
    block = recognizer.recognize(ImageBlock(source=b64(render(["Hi"])), recognition_mode="ocr"))
    assert block.status == "error"
    assert block.error == (
        f"OCR failed: Tesseract language data ['eng', 'osd'] not found in {str(tmp_path)!r} "
        "(install tesseract-ocr-eng, tesseract-ocr-osd)"
    )
    again = recognizer.retry(block)
    assert (again.status, again.attempts) == ("error", 2)
    given_up = recognizer.retry(again)
    assert (given_up.attempts, given_up.notice) == (2, "given up after 2 attempts")
    # once Tesseract is there, a retry of a block that had attempts left succeeds
    fixed = ImageRecognizer(ocr=TesseractOCR(), max_attempts=2).retry(block)
    assert (fixed.status, fixed.recognized_text, fixed.attempts, fixed.error) == ("resolved", "Hi", 2, None)


def test_an_undecodable_image_is_an_error_not_an_exception(ocr: TesseractOCR) -> None:
    broken = render(["Hi"])[:40]  # the header is there, the pixels are not
    block = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(broken), recognition_mode="ocr"))
    assert block.status == "error"
    assert (block.error or "").startswith("OCR failed: the image cannot be decoded")


# --- vision and auto ----------------------------------------------------------------------------


def _describe(body: dict[str, Any]) -> AssistantMessage:
    parts = body["messages"][0]["content"]
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    return AssistantMessage(content=[], stop_reason="end_turn") if "empty" in parts[0]["text"] else _reply()


def _reply() -> AssistantMessage:
    from msgwire import assistant

    return assistant("A white page with one line of black text. Text: Invoice total 1234 EUR", stop_reason="end_turn")


def test_vision_sends_the_image_to_the_model_and_keeps_its_analysis(tmp_path: Path) -> None:
    (tmp_path / "scan.png").write_bytes(render(["Invoice total 1234 EUR"]))
    with serving(v1__chat=scripted_model(_describe)) as server:
        vision = HttpVision(server.url + "/v1.chat")
        recognizer = ImageRecognizer(vision=vision, root=tmp_path)
        block = recognizer.recognize(ImageBlock(source=PathSource(path="scan.png"), recognition_mode="vision"))
    assert (block.status, block.mode_used, block.notice) == ("resolved", "vision", None)
    assert block.vision_analysis == "A white page with one line of black text. Text: Invoice total 1234 EUR"
    assert block.recognized_text is None
    prompt = server.requests[0][2]
    assert b"transcribe every piece of text" in prompt
    # the path was inlined, so the model of the conversation gets the image itself
    assert type(block.source) is Base64Source
    body = formats.to_request([user([block])], "openai")
    assert body["messages"][0]["content"][0]["type"] == "image_url"


def test_auto_uses_vision_when_the_model_can_see_else_ocr_with_a_notice(ocr: TesseractOCR) -> None:
    data = render(["Invoice total 1234 EUR"])
    with serving(chat=scripted_model(_describe), broken=(500, {}, b"overloaded")) as server:
        seeing = ImageRecognizer(vision=HttpVision(server.url + "/chat"), ocr=ocr)
        block = seeing.recognize(ImageBlock(source=b64(data)))
        assert (block.mode_used, block.notice) == ("vision", None)
        assert len(server.requests) == 1  # OCR skipped

        blind = ImageRecognizer(vision=HttpVision(server.url + "/chat", sees_images=False), ocr=ocr)
        block = blind.recognize(ImageBlock(source=b64(data)))
        assert (block.mode_used, block.recognized_text) == ("ocr", "Invoice total 1234 EUR")
        assert block.notice == "vision unavailable: the model cannot see images; the image was read with OCR instead"
        assert len(server.requests) == 1  # no call to a model that cannot see

        failing = ImageRecognizer(vision=HttpVision(server.url + "/broken"), ocr=ocr)
        block = failing.recognize(ImageBlock(source=b64(data)))
        assert (block.status, block.mode_used, block.recognized_text) == ("resolved", "ocr", "Invoice total 1234 EUR")
        assert (block.notice or "").startswith(
            "vision failed (HTTPStatusError: Server error '500 Internal Server Error'"
        )
        assert (block.notice or "").endswith("; the image was read with OCR instead")

        explicit = failing.recognize(ImageBlock(source=b64(data), recognition_mode="vision"))
        assert explicit.status == "error"
        assert (explicit.error or "").startswith("vision failed: HTTPStatusError")
        empty = ImageRecognizer(vision=HttpVision(server.url + "/chat"), ocr=ocr).recognize(
            ImageBlock(source=b64(data), recognition_mode="vision"), role="user"
        )
        assert empty.status == "resolved"
    no_model = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(data), recognition_mode="vision"))
    assert no_model.error == "vision was asked for, but no model that can see images is configured"


def test_an_ocr_read_image_goes_to_the_model_as_text(ocr: TesseractOCR) -> None:
    """The request a text-only model gets: the recognized text, not the image (which it would
    refuse with a 400), and no recognition metadata."""
    data = render(["Invoice total 1234 EUR"])
    block = ImageRecognizer(ocr=ocr).recognize(ImageBlock(source=b64(data)))
    body = formats.to_request([user([block])], "openai")
    assert body["messages"][0]["content"] == '<image media_type="image/png">\nInvoice total 1234 EUR\n</image>'
    assert "confidence" not in str(body)


def test_resolve_message_touches_only_pending_images(ocr: TesseractOCR) -> None:
    recognizer = ImageRecognizer(ocr=ocr)
    done = ImageBlock(source=UrlSource(url="https://example.invalid/a.png"), recognized_text="old", mode_used="ocr")
    message = user([done])
    assert recognizer.resolve_message(message) is message  # an older document's result is kept, no fetch
    fresh = recognizer.resolve_message(user([done, ImageBlock(source=b64(render(["Hi"])), recognition_mode="ocr")]))
    assert [b.recognized_text for b in fresh.content] == ["old", "Hi"]  # type: ignore[union-attr]
