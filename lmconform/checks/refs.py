"""Public sources the checks enforce. A check's `ref` is one of these, so a user can read the rule itself."""

OPENAI_CHAT_STREAMING = "https://platform.openai.com/docs/api-reference/chat-streaming"
OPENAI_CHAT_CREATE = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_MODELS = "https://platform.openai.com/docs/api-reference/models/list"
OPENAI_ERRORS = "https://platform.openai.com/docs/guides/error-codes"
WHATWG_SSE = "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation"
LMSTUDIO_TOOLS = "https://lmstudio.ai/docs/developer/openai-compat/tools"
LMSTUDIO_TOOL_CHOICE = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/670"
LMSTUDIO_GENERATOR_ORDER = "https://lmstudio.ai/docs/typescript/plugins/generator/tool-calling-generators"
VOID_PARSER = (
    "https://github.com/voideditor/void/blob/main/src/vs/workbench/contrib/void/electron-main/llmMessage/"
    "sendLLMMessage.impl.ts"
)
OPENAI_PYTHON_STREAM_HELPER = "https://github.com/openai/openai-python/blob/main/src/openai/lib/streaming/chat/_completions.py"
USAGE_CHUNK_CRASH = "https://github.com/microsoft/Foundry-Local/issues/905"
LMCONFORM_LIMITS = "README.md#limits"
OPENAI_RESPONSES_CREATE = "https://platform.openai.com/docs/api-reference/responses/create"
OPENAI_RESPONSES_STREAMING = "https://platform.openai.com/docs/api-reference/responses-streaming"
OPEN_RESPONSES_SPEC = "https://www.openresponses.org/specification"
LMSTUDIO_RESPONSES = "https://lmstudio.ai/docs/developer/openai-compat/responses"
LMSTUDIO_NESTED_TOOLS = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1064"
LMSTUDIO_CHAIN_NOT_FOUND = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1188"
OPENAI_PYTHON_RESPONSES_HELPER = (
    "https://github.com/openai/openai-python/blob/main/src/openai/lib/streaming/responses/_responses.py"
)
ANTHROPIC_MESSAGES = "https://docs.anthropic.com/en/api/messages"
ANTHROPIC_STREAMING = "https://docs.anthropic.com/en/docs/build-with-claude/streaming"
ANTHROPIC_ERRORS = "https://docs.anthropic.com/en/api/errors"
ANTHROPIC_TOOL_USE = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
ANTHROPIC_DEFINE_TOOLS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools"
ANTHROPIC_THINKING = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
ANTHROPIC_PYTHON_SSE = "https://github.com/anthropics/anthropic-sdk-python/blob/main/src/anthropic/_streaming.py"
ANTHROPIC_PYTHON_STREAM_HELPER = (
    "https://github.com/anthropics/anthropic-sdk-python/blob/main/src/anthropic/lib/streaming/_messages.py"
)
CLAUDE_CODE_TOOL_USE = "https://github.com/BerriAI/litellm/issues/34692"
LMSTUDIO_NATIVE_CHAT = "https://lmstudio.ai/docs/developer/rest/chat"
LMSTUDIO_NATIVE_STREAMING = "https://lmstudio.ai/docs/developer/rest/streaming-events"
