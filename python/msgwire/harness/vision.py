"""``ProviderVision``: a provider as the ``VisionModel`` that image recognition asks
(``msgwire.harness.resources.ImageRecognizer(vision=...)``), composing ``providers`` and
``resources`` as ``agent.py`` does, so that neither imports the other."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgwire.types import AssistantMessage, Request, UserMessage

if TYPE_CHECKING:
    from .providers import Provider

__all__ = ["ProviderVision"]


class ProviderVision:
    """``ImageRecognizer(vision=ProviderVision(provider, model=...))``: the model sees images when
    the capability table says it does (``vision=True`` to say so for a model it does not know),
    and ``analyze`` is one non-streamed call."""

    def __init__(
        self, provider: Provider, *, model: str | None = None, max_tokens: int = 1024, vision: bool | None = None
    ) -> None:
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens
        self.vision = vision

    @property
    def sees_images(self) -> bool:
        if self.vision is not None:
            return self.vision
        return self.provider.capabilities(self.model).vision is True

    def analyze(self, message: UserMessage) -> AssistantMessage:
        return self.provider.complete(Request(messages=[message], model=self.model, max_tokens=self.max_tokens))
