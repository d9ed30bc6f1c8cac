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
LMSTUDIO_CHANGELOG = "https://lmstudio.ai/docs/developer/api-changelog"
LMSTUDIO_ROLE_MISSING = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/445"
LMSTUDIO_EMPTY_NAME = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/649"
LMSTUDIO_EMPTY_TOOL_CALLS = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1318"
LMSTUDIO_EMPTY_TOOL_ID = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/830"
LMSTUDIO_JSON_OBJECT = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/307"
LMSTUDIO_REASONING_SWALLOWED = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/378"
LMSTUDIO_WHOLE_ARGUMENTS = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1868"
LMSTUDIO_RESPONSES_TOOLS_OMITTED = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1174"
LMSTUDIO_ANNOTATIONS = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1089"
LMSTUDIO_STRUCTURED_OUTPUT = "https://github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1396"
ZED_LMSTUDIO_PROVIDER = "https://github.com/zed-industries/zed/blob/main/crates/language_models/src/provider/lmstudio.rs"
ZED_LMSTUDIO_CLIENT = "https://github.com/zed-industries/zed/blob/main/crates/lmstudio/src/lmstudio.rs"
GPTEL_OPENAI = "https://github.com/karthink/gptel/blob/master/gptel-openai.el"
OPENCODE_EMPTY_TOOL_CALLS = "https://github.com/anomalyco/opencode/pull/6054"
LLAMA_CPP_CHAT_TESTS = (
    "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/tests/unit/test_chat_completion.py"
)
LLAMA_CPP_TOOL_TESTS = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/tests/unit/test_tool_call.py"
VLLM_CHAT_ERROR_TEST = (
    "https://github.com/vllm-project/vllm/blob/main/tests/entrypoints/openai/chat_completion/test_chat_error.py"
)
VLLM_USAGE_EVERY_CHUNK = "https://github.com/vllm-project/vllm/issues/7262"
VLLM_RESPONSES_MAX_TOKENS = (
    "https://github.com/vllm-project/vllm/blob/main/tests/entrypoints/openai/responses/test_simple.py"
)
VLLM_EVENT_STACK = "https://github.com/vllm-project/vllm/blob/main/tests/entrypoints/openai/responses/conftest.py"
LOCALAI_FINISH_WITHOUT_CALL = "https://github.com/mudler/LocalAI/issues/6218"
LOCALAI_CALL_ECHOED = "https://github.com/mudler/LocalAI/issues/10052"
OPENAI_PYTHON_SSE_ID = "https://github.com/openai/openai-python/issues/2722"
OPEN_RESPONSES_SCHEMAS = "https://github.com/openresponses/openresponses/tree/main/src/generated/kubb/zod"
OPEN_RESPONSES_SSE_PARSER = "https://github.com/openresponses/openresponses/blob/main/src/lib/sse-parser.ts"
LITELLM_LMSTUDIO = "https://github.com/BerriAI/litellm/blob/main/litellm/llms/lm_studio/chat/transformation.py"
