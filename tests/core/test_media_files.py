"""A local file given as an image (`user(images=[path])`, `tool_result(images=[path])`) is sent
only when it is a regular file, no larger than the limit, whose content is the kind its name
says: the media type comes from the bytes. A symlink, a FIFO, a device, a directory, a text file
named `.png` or a file over the limit is refused with one typed line saying what to do."""

from __future__ import annotations

import os
import struct
import threading
import zlib
from pathlib import Path
from typing import Any

import pytest

from modelstream import ConfigurationError, InvalidMessageError, tool_result, user
from support import REPO


def png(width: int = 1, height: int = 1) -> bytes:
    """A PNG signature and its IHDR chunk (a real image's first 33 bytes)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + header
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(header))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def ftyp(brand: bytes) -> bytes:
    """An ISO base media file (MP4, M4A, QuickTime, HEIF) starts with its `ftyp` box."""
    return struct.pack(">I", 24) + b"ftyp" + brand + b"\x00\x00\x02\x00" + brand + b"isom"


def refusal(image: Any, *, via: str = "user") -> str:
    """The one line a refused image file gets, as the media file error it is."""
    from modelstream.media import MediaFileError

    with pytest.raises(MediaFileError) as caught:
        if via == "user":
            user("Look", images=[image])
        else:
            tool_result("call_1", "the chart", images=[image])
    assert isinstance(caught.value, InvalidMessageError) and isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "\n" not in message
    return message


def sent(image: Any) -> tuple[bytes, str]:
    item = user("Look", images=[image])["content_items"][1]
    assert item["type"] == "inline_data.done"
    return item["data"], item["mime_type"]  # type: ignore[typeddict-item]


def test_a_real_png_is_sent_as_image_png(tmp_path: Path) -> None:
    picture = tmp_path / "x.png"
    picture.write_bytes(png())

    assert sent(picture) == (png(), "image/png")


def test_a_text_file_named_png_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "x.png"
    fake.write_text("this is not a picture\n")

    message = refusal(fake)

    assert message.startswith(f"{fake} is named as image/png but does not hold one")


def test_a_jpeg_named_png_is_refused_naming_what_it_holds(tmp_path: Path) -> None:
    fake = tmp_path / "photo.png"
    fake.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")

    message = refusal(fake)

    assert "is named as image/png but holds image/jpeg" in message
    assert "rename it to .jpg" in message


def test_a_symlink_to_a_real_png_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.png"
    real.write_bytes(png())
    link = tmp_path / "link.png"
    link.symlink_to(real)

    message = refusal(link)

    assert message.startswith(f"{link} is a symbolic link, not a regular file")
    assert refusal(link, via="tool_result") == message


def test_a_fifo_named_png_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "y.png"
    os.mkfifo(fifo)
    outcome: list[BaseException | None] = []

    def read() -> None:
        try:
            user("Look", images=[fifo])
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # let the reader go before failing: open the writing end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading the FIFO blocked")

    assert len(outcome) == 1 and isinstance(outcome[0], InvalidMessageError)
    assert str(outcome[0]).startswith(f"{fifo} is a FIFO, not a regular file")


def test_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    album = tmp_path / "album.png"
    album.mkdir()

    assert refusal(album).startswith(f"{album} is a directory, not a regular file")
    assert refusal("/dev/null").startswith("/dev/null is a character device, not a regular file")


def test_a_file_over_the_size_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modelstream.media import read_media_file

    picture = tmp_path / "big.png"
    picture.write_bytes(png() + bytes(67))  # 100 bytes
    monkeypatch.setenv("MODELSTREAM_MAX_MEDIA_BYTES", "99")

    message = refusal(picture)

    assert message == (
        f"{picture} is 100 bytes, over the 99-byte limit for a media file: send a smaller file, "
        "or raise the limit (MODELSTREAM_MAX_MEDIA_BYTES, or max_bytes=)"
    )
    monkeypatch.setenv("MODELSTREAM_MAX_MEDIA_BYTES", "100")
    assert sent(picture)[1] == "image/png"  # the limit itself is allowed
    assert read_media_file(picture, max_bytes=1_000)[1] == "image/png"  # the argument wins


def test_the_default_limit_is_20_mib_and_a_wrong_setting_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from modelstream.media import MAX_MEDIA_BYTES

    picture = tmp_path / "x.png"
    picture.write_bytes(png())
    monkeypatch.setenv("MODELSTREAM_MAX_MEDIA_BYTES", "twenty")

    with pytest.raises(ConfigurationError, match="MODELSTREAM_MAX_MEDIA_BYTES must be"):
        user("Look", images=[picture])
    assert MAX_MEDIA_BYTES == 20 * 1024 * 1024


def test_content_of_no_known_kind_is_refused_whatever_its_name(tmp_path: Path) -> None:
    unnamed = tmp_path / "scan"
    unnamed.write_bytes(b"\x00\x01\x02\x03 some binary")
    blob = tmp_path / "scan.bin"
    blob.write_bytes(b"\x00\x01\x02\x03 some binary")

    assert refusal(unnamed).startswith(f"cannot tell what kind of media {unnamed} holds")
    assert refusal(blob).startswith(f"cannot tell what kind of media {blob} holds")


@pytest.mark.parametrize(
    ("name", "content", "media_type"),
    [
        ("scan", png(), "image/png"),  # no extension: the bytes alone say what it is
        ("a.jpg", b"\xff\xd8\xff\xdb" + bytes(8), "image/jpeg"),
        ("a.jpeg", b"\xff\xd8\xff\xe1" + bytes(8), "image/jpeg"),
        ("a.gif", b"GIF89a" + bytes(8), "image/gif"),
        ("a.webp", b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        ("a.heic", ftyp(b"heic"), "image/heic"),
        ("a.pdf", b"%PDF-1.7\n", "application/pdf"),
        ("a.wav", b"RIFF\x10\x00\x00\x00WAVEfmt ", "audio/wav"),
        ("a.mp3", b"ID3\x04\x00" + bytes(8), "audio/mpeg"),
        ("b.mp3", b"\xff\xfb\x90\x64" + bytes(8), "audio/mpeg"),
        ("a.ogg", b"OggS\x00\x02" + bytes(8), "audio/ogg"),
        ("a.flac", b"fLaC\x00\x00\x00\x22", "audio/flac"),
        ("a.aac", b"\xff\xf1\x50\x80" + bytes(8), "audio/aac"),
        ("a.m4a", ftyp(b"M4A "), "audio/mp4"),
        ("a.mp4", ftyp(b"isom"), "video/mp4"),
        ("a.mov", ftyp(b"qt  "), "video/quicktime"),
        ("a.webm", b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm", "video/webm"),
    ],
)
def test_the_media_type_is_read_from_the_content(
    tmp_path: Path, name: str, content: bytes, media_type: str
) -> None:
    from modelstream.media import read_media_file, sniff_media_type

    file = tmp_path / name
    file.write_bytes(content)

    assert read_media_file(file) == (content, media_type)
    assert sent(file) == (content, media_type)
    assert sniff_media_type(content) == media_type


def test_the_name_picks_the_kind_of_a_container_that_holds_several(tmp_path: Path) -> None:
    song = tmp_path / "song.m4a"  # many M4A files carry the generic brand `isom`
    song.write_bytes(ftyp(b"isom"))
    clip = tmp_path / "clip.png"
    clip.write_bytes(ftyp(b"isom"))

    assert sent(song)[1] == "audio/mp4"
    assert "is named as image/png but holds video/mp4: rename it to .mp4" in refusal(clip)


def test_a_missing_file_is_still_named_as_no_such_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such file"):
        user("Look", images=[tmp_path / "nowhere.png"])


def test_the_refusals_docs_media_md_shows_are_the_ones_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guide = (REPO / "docs" / "media.md").read_text()
    shown = guide.split("## Sending files", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MODELSTREAM_MAX_MEDIA_BYTES", raising=False)
    Path("notes.png").write_text("a note, not a picture\n")
    Path("photo.png").write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
    Path("real.png").write_bytes(png())
    Path("latest.png").symlink_to("real.png")
    with open("poster.png", "wb") as poster:  # 30 MiB, sparse: refused by its size, unread
        poster.truncate(30 * 1024 * 1024)

    given = [refusal(name) for name in ("notes.png", "photo.png", "latest.png", "poster.png")]

    assert given == shown.splitlines()


def test_saved_media_never_write_through_a_link_planted_at_their_name(tmp_path: Path) -> None:
    """`modelstream chat --save-media` names its files itself; a link someone put at such a
    name must not turn the write into one elsewhere."""
    from modelstream.cli.media import save_media

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / "stamp-1.png").symlink_to(victim)
    png = {"type": "inline_data.done", "data": b"\x89PNG\r\n\x1a\n", "mime_type": "image/png"}

    with pytest.raises(OSError):
        save_media([png], out, "stamp")
    assert victim.read_text() == "keep me"
    (written,) = save_media([png], tmp_path / "fresh", "stamp")
    assert written.read_bytes() == png["data"]
