"""The invoice extraction from a PDF: the request each provider would get, built without any model call.

Run `python examples/invoice_from_pdf.py` to print them; drop the `wire=True` previews and call
`extract.generate_sync(...)` with a real model (`openai/...`, `anthropic/...`, `googleai/...`) to run it.
"""

import base64
import json
from pathlib import Path

from dotprompt import PromptLibrary, preview_request
from dotprompt.providers import AnthropicModel, GeminiModel, OpenAIModel, ProviderConfig

HERE = Path(__file__).resolve().parent


def pdf_url(path: Path) -> str:
    return "data:application/pdf;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def requests(pdf: str) -> dict[str, dict]:
    """Provider name -> the JSON body it would be sent for the invoice in `pdf` (no key needed, nothing sent)."""
    extract = PromptLibrary(HERE / "prompts").load("extract_pdf")
    options = extract.to_options({"pdf": pdf})
    models = {"openai": OpenAIModel("openai/gpt-4o-mini", config=ProviderConfig("openai", "https://api.openai.com/v1")),
              "anthropic": AnthropicModel("anthropic/claude-sonnet-4-5",
                                          config=ProviderConfig("anthropic", "https://api.anthropic.com/v1")),
              "googleai": GeminiModel("googleai/gemini-2.5-flash",
                                      config=ProviderConfig("googleai", "https://generativelanguage.googleapis.com/v1beta"))}
    return {name: preview_request(options, model=model, wire=True) for name, model in models.items()}


def shortened(value):
    """The body with long base64 strings cut, for printing."""
    if isinstance(value, dict):
        return {k: shortened(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shortened(v) for v in value]
    return value[:60] + f"...({len(value)} chars)" if isinstance(value, str) and len(value) > 200 else value


if __name__ == "__main__":
    for provider, body in requests(pdf_url(HERE / "inputs" / "invoice.pdf")).items():
        print(f"--- {provider}\n{json.dumps(shortened(body), indent=2)[:1500]}\n")
