"""Media URLs as providers need them: the payload of a `data:` URL, the content type and its kind."""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass
from urllib.parse import unquote_to_bytes, urlparse

from ..errors import UsageError
from ..types import Media

__all__ = ["AUDIO", "IMAGE", "OTHER", "PDF", "TEXT", "MediaInput", "media_input", "media_kind", "parse_data_url", "unsupported"]

# Kinds a provider decides on; a content type outside them is "other".
IMAGE, PDF, AUDIO, VIDEO, TEXT, OTHER = "image", "pdf", "audio", "video", "text", "other"


def parse_data_url(url: str) -> tuple[str, str]:
    """(media type, base64 payload) of a `data:` URL."""
    header, comma, payload = url[len("data:"):].partition(",")
    if not comma:
        raise UsageError(f"media URL {url[:60]!r} is not a valid data: URL (expected data:<type>;base64,<data>)")
    params = header.split(";")
    if "base64" in params[1:]:
        return params[0] or "application/octet-stream", payload
    return params[0] or "text/plain", base64.b64encode(unquote_to_bytes(payload)).decode("ascii")


@dataclass(frozen=True)
class MediaInput:
    """One media part resolved: its content type and kind, and the base64 payload of a data: URL (else the URL)."""

    content_type: str
    kind: str
    data: str | None  # base64, for a data: URL
    url: str

    @property
    def data_url(self) -> str:
        return f"data:{self.content_type};base64,{self.data}" if self.data is not None else self.url

    @property
    def filename(self) -> str:
        """A file name for APIs that want one: the URL's last path segment, else one made from the type."""
        if self.data is None:
            name = urlparse(self.url).path.rsplit("/", 1)[-1]
            if name:
                return name
        return f"document{mimetypes.guess_extension(self.content_type) or ''}"


def media_input(media: Media) -> MediaInput:
    if media.url.startswith("data:"):
        mime, data = parse_data_url(media.url)
        content_type = media.content_type or mime
    else:
        data = None
        content_type = media.content_type or mimetypes.guess_type(urlparse(media.url).path)[0] or ""
    return MediaInput(content_type, media_kind(content_type), data, media.url)


def media_kind(content_type: str) -> str:
    main = content_type.split(";", 1)[0].strip().lower()
    if main == "application/pdf":
        return PDF
    top = main.partition("/")[0]
    return {"image": IMAGE, "audio": AUDIO, "video": VIDEO, "text": TEXT}.get(top, OTHER)


def unsupported(provider: str, item: MediaInput, accepted: str, hint: str = "") -> UsageError:
    """The error for a media part a provider cannot take: which part, which provider, what it takes."""
    shown = item.url if item.data is None else f"data:{item.content_type or '?'};base64,... ({len(item.data)} chars)"
    return UsageError(f"{provider} cannot take media of type {item.content_type or 'unknown'!r} ({shown[:120]}); "
                      f"it accepts {accepted}{'. ' + hint if hint else ''}")
