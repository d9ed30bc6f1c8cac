"""The VS Code language-model bridge protocol: newline-delimited JSON-RPC 2.0 on a process's stdio. A case's turns
are further messages to the same process; a chat turn carries the whole history (lmconform.apis.vscodelm.run)."""

from lmconform.api_entry import STDIO, Api

# The JSON-RPC methods of the protocol.
CHAT_RESPONSE = "lm/provideLanguageModelChatResponse"
CHAT_INFORMATION = "lm/provideLanguageModelChatInformation"
TOKEN_COUNT = "lm/provideTokenCount"
CANCEL = "lm/cancel"
RESPONSE_PART = "lm/responsePart"
RESPONSE_COMPLETE = "lm/responseComplete"

API = Api("vscodelm", "VS Code language-model bridge", STDIO, CHAT_RESPONSE, "",
          enumerations=frozenset({"type", "role", "method", "jsonrpc", "toolMode"}), model_field="modelId",
          tools_at=("options", "tools"), topics={"Tool calls": ("vscodelm.tools.",)})
