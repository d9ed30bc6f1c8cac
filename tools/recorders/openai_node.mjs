// The openai npm package's calls whose requests are the recorded-openai-node-* cases: the same calls as
// openai_python.py.
//
//     node tools/recorders/openai_node.mjs http://127.0.0.1:8765
//
// Point it at `lmconform record`: the recording endpoint writes the cases, this script writes nothing. The package
// comes from .cache/recorders/node (`python tools/recorders/install.py` puts the pinned version there), or from the
// node_modules folder named by LMCONFORM_NODE_MODULES. LMCONFORM_API_KEY and LMCONFORM_MODEL set the key and the
// model it sends; each call names itself in the X-Lmconform-Label header, which becomes the case's description.

import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.LMCONFORM_NODE_MODULES ?? path.join(here, "..", "..", ".cache", "recorders", "node", "node_modules");
// Resolved from the install folder, not from this script's: the package is not installed beside the script.
const { default: OpenAI } = await import(createRequire(path.join(modules, "..", "package.json")).resolve("openai"));

const MODEL = process.env.LMCONFORM_MODEL ?? "lmconform-reference";
const WEATHER_TOOL = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather for a location",
    parameters: {
      type: "object",
      properties: { location: { type: "string", description: "City name" } },
      required: ["location"],
    },
  },
};
// The Responses API takes a tool's fields at the top level (LM Studio refuses the chat form there).
const CALCULATE_TOOL = {
  type: "function",
  name: "calculate",
  description: "Perform mathematical calculation",
  parameters: {
    type: "object",
    properties: { expression: { type: "string", description: "Mathematical expression" } },
    required: ["expression"],
  },
};

const label = (text) => ({ headers: { "X-Lmconform-Label": text } });

async function main(baseURL) {
  // No retries: a retried request would be recorded twice.
  const client = new OpenAI({
    baseURL: baseURL.replace(/\/+$/, "") + "/v1",
    apiKey: process.env.LMCONFORM_API_KEY ?? "lm-studio",
    maxRetries: 0,
  });
  const weather = [{ role: "user", content: "What's the weather in Paris?" }];
  await client.chat.completions.create({ model: MODEL, messages: weather, tools: [WEATHER_TOOL] },
    label("chat.completions.create with a tool"));
  await client.chat.completions.stream({ model: MODEL, messages: weather, tools: [WEATHER_TOOL] },
    label("chat.completions.stream helper with a tool")).finalChatCompletion();

  const calculate = "Calculate 7*6 using the calculate tool";
  await client.responses.create({ model: MODEL, input: calculate, tools: [CALCULATE_TOOL] },
    label("responses.create with a flattened tool"));
  await client.responses.stream({ model: MODEL, input: calculate, tools: [CALCULATE_TOOL] },
    label("responses.stream helper with a flattened tool")).finalResponse();

  const chain = label("responses.create, then a turn chained by previous_response_id");
  const first = await client.responses.create({ model: MODEL, input: "Remember the word 'heliotrope' for later." }, chain);
  await client.responses.create({ model: MODEL, input: "What word did I ask you to remember?",
    previous_response_id: first.id }, chain);

  const answered = label("responses.create tool call, answered by function_call_output");
  const called = await client.responses.create({ model: MODEL, input: "Calculate 12/4 using the calculate tool",
    tools: [CALCULATE_TOOL], tool_choice: "required" }, answered);
  const call = called.output.find((item) => item.type === "function_call");
  await client.responses.create({ model: MODEL, input: [{ type: "function_call_output", call_id: call.call_id, output: "3" }],
    previous_response_id: called.id, tools: [CALCULATE_TOOL] }, answered);
}

if (process.argv.length !== 3) {
  console.error(`usage: node ${process.argv[1]} BASE_URL (the recording endpoint, e.g. http://127.0.0.1:8765)`);
  process.exit(2);
}
await main(process.argv[2]);
