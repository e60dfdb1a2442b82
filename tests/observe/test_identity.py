"""PromptIdentity: a content hash of the prompt's text and its partials, with name and variant."""

from __future__ import annotations

import asyncio
import os
import time

from dotprompt import PromptLibrary
from dotprompt.doubles import ScriptedModel
from dotprompt.identity import PromptIdentity


def touch_later(path, text):
    """Rewrite a file so hot reload sees it (a later mtime, past the settle time)."""
    path.write_text(text)
    later = time.time() + 5
    os.utime(path, (later, later))


def test_the_hash_covers_the_file_and_every_partial_it_includes(folder):
    main = folder.write("a.prompt", '{% include "outer" %} {{ x }}')
    outer = folder.write("_outer.prompt", 'outer {% include "inner" %}')
    inner = folder.write("_inner.prompt", "inner v1")
    folder.write("b.prompt", '{% include "outer" %} {{ x }}')
    lib = folder.library()
    first = lib.load("a").identity
    assert first.name == "a" and first.variant is None and len(first.hash) == 16
    assert dict(first.partials).keys() == {"outer", "inner"}
    assert lib.load("b").identity.hash == first.hash  # same text and partials: same hash, whatever the name
    touch_later(inner, "inner v2")
    second = lib.load("a").identity
    assert second.hash != first.hash and dict(second.partials)["outer"] == dict(first.partials)["outer"]
    assert lib.load("b").identity.hash == second.hash
    touch_later(main, '{% include "outer" %} {{ x }}!')
    assert lib.load("a").identity.hash not in (first.hash, second.hash)
    touch_later(outer, "no more includes")
    assert dict(lib.load("a").identity.partials) == {"outer": dict(lib.load("a").identity.partials)["outer"]}


def test_variants_handlebars_code_partials_and_resolvers(folder):
    folder.write("greet.prompt", "Hi {{ name }}")
    folder.write("greet.formal.prompt", "Good day {{ name }}")
    folder.write("hb.prompt", "---\ndotprompt.engine: handlebars\n---\n{{> sig}} {{name}}")
    folder.write("_sig.prompt", "-- the team")
    lib = folder.library(partial_resolver=lambda name: "from resolver" if name == "far" else None)
    formal = lib.load("greet", "formal").identity
    assert formal.variant == "formal" and formal.label == f"greet.formal@{formal.hash}"
    assert formal.hash != lib.load("greet").identity.hash
    assert dict(lib.load("hb").identity.partials).keys() == {"sig"}
    lib.define_partial("code", "v1")
    source = lib.from_source('{% include "code" %}{% include "far" %}', name="s")
    before = source.identity
    assert dict(before.partials).keys() == {"code", "far"}
    lib.define_partial("code", "v2")
    assert source.identity.hash != before.hash


def test_it_rides_on_the_rendered_prompt_and_the_response_but_not_the_dotprompt_shape(folder):
    folder.write("p.prompt", "---\nmodel: echo\n---\nhello")
    prompt = folder.library().load("p")
    rendered = prompt.render()
    assert rendered.identity == prompt.identity and "identity" not in rendered.to_dict()
    response = asyncio.run(prompt.generate(model=ScriptedModel(["hi"])))
    assert response.identity == prompt.identity and "identity" not in response.to_dict()
    assert response.identity.to_dict() == {"name": "p", "hash": prompt.identity.hash}


def test_the_hash_is_the_text_not_the_bytes_of_a_byte_order_mark(folder):
    folder.write("p.prompt", "hello")
    folder.write("q.prompt", b"\xef\xbb\xbfhello")
    lib = PromptLibrary(folder.path)
    assert lib.load("p").identity.hash == lib.load("q").identity.hash == PromptIdentity.of("x", None, "hello").hash
