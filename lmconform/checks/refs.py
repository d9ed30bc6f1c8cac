"""Public sources the checks enforce. A check's `ref` is one of these, so a user can read the rule itself: those
several APIs' checks cite are below; those of one API's checks only are in its folder (`lmconform/apis/<api>/
refs.toml`, read through the API table), and are read from here by the same name."""

from lmconform.api_table import APIS

OPENAI_CHAT_STREAMING = "https://platform.openai.com/docs/api-reference/chat-streaming"
OPENAI_CHAT_CREATE = "https://platform.openai.com/docs/api-reference/chat/create"
OPENAI_CHAT_LOGPROBS = "https://platform.openai.com/docs/api-reference/chat/create#chat-create-logprobs"
OPENAI_CHAT_USAGE = "https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage"
OPENAI_RESPONSES_INCLUDE = "https://platform.openai.com/docs/api-reference/responses/create#responses-create-include"
OPENAI_RESPONSES_GET = "https://platform.openai.com/docs/api-reference/responses/get"
OPENAI_ERRORS = "https://platform.openai.com/docs/guides/error-codes"
WHATWG_SSE = "https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation"
LMSTUDIO_TOOL_CHOICE = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/670"
LMSTUDIO_GENERATOR_ORDER = "https://lmstudio.ai/docs/typescript/plugins/generator/tool-calling-generators"
VOID_PARSER = (
    "https://github.com/voideditor/void/blob/main/src/vs/workbench/contrib/void/electron-main/llmMessage/"
    "sendLLMMessage.impl.ts"
)
LMCONFORM_LIMITS = "README.md#limits"
RFC9112_BODY_LENGTH = "https://www.rfc-editor.org/rfc/rfc9112#section-6.3"
OPENAI_RESPONSES_GET = "https://platform.openai.com/docs/api-reference/responses/get"
OPENAI_RESPONSES_STREAMING = "https://platform.openai.com/docs/api-reference/responses-streaming"
ANTHROPIC_DEFINE_TOOLS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools"
LMSTUDIO_STRUCTURED_OUTPUT = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1396"
GPTEL_OPENAI = "https://github.com/karthink/gptel/blob/master/gptel-openai.el"
OPENCODE_EMPTY_TOOL_CALLS = "https://github.com/anomalyco/opencode/pull/6054"
OPENCODE_OVERFLOW_UNRECOGNISED = "https://github.com/anomalyco/opencode/issues/8089"
VLLM_CHAT_ERROR_TEST = (
    "https://github.com/vllm-project/vllm/blob/main/tests/entrypoints/openai/chat_completion/test_chat_error.py"
)
LOCALAI_CALL_ECHOED = "https://github.com/mudler/LocalAI/issues/10052"
OPENAI_PYTHON_SSE_ID = "https://github.com/openai/openai-python/issues/2722"
OPEN_RESPONSES_SSE_PARSER = "https://github.com/openresponses/openresponses/blob/main/src/lib/sse-parser.ts"
LITELLM_LMSTUDIO = "https://github.com/BerriAI/litellm/blob/main/litellm/llms/lm_studio/chat/transformation.py"
LMSTUDIO_CLAUDE_CODE = "https://lmstudio.ai/docs/integrations/claude-code"
LMSTUDIO_CLAUDE_CODE_SYSTEM_TURN = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/2204"
CLAUDE_CODE_API_ERROR_SHOWN = "https://github.com/anthropics/claude-code/issues/63469"
VLLM_REASONING_OUTPUTS = "https://docs.vllm.ai/en/stable/features/reasoning_outputs/"
DEEPSEEK_THINKING_MODE = "https://api-docs.deepseek.com/guides/thinking_mode"
LLAMA_CPP_SERVER_README = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md"
OPENAI_REASONING = "https://platform.openai.com/docs/guides/reasoning"
OPENAI_JSON_MODE = "https://platform.openai.com/docs/guides/structured-outputs#json-mode"
OPENAI_REFUSALS = "https://platform.openai.com/docs/guides/structured-outputs#refusals"
OPENAI_STRUCTURED_OUTPUTS = "https://platform.openai.com/docs/guides/structured-outputs"
OPENAI_STRICT_FUNCTIONS = "https://platform.openai.com/docs/guides/function-calling#strict-mode"
JSON_SCHEMA_VALIDATION = "https://json-schema.org/draft/2020-12/json-schema-validation"


def __getattr__(name: str) -> str:
    """A source one API's folder declares (`from lmconform.checks.refs import ANTHROPIC_MESSAGES`)."""
    for api in APIS.values():
        if name in api.refs:
            return api.refs[name]
    raise AttributeError(f"no reference {name!r} here or in any API's refs.toml")
