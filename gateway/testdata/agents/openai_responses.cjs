// The official OpenAI SDK's Responses API against ptk serve: create and
// stream, a function-call round trip stateless (store false, the items sent
// back) and stateful (previous_response_id), an error. It prints what it
// saw as one JSON object; the Go test (TestSDKResponses) checks it.
const sdk = require('openai');
const OpenAI = sdk.default ?? sdk;

const client = new OpenAI({ baseURL: process.env.BASE_URL + '/v1', apiKey: process.env.API_KEY, maxRetries: 0 });
const model = 'gpt-5';
const tools = [{
  type: 'function', name: 'read_file', description: 'Read a file from the workspace.', strict: false,
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}];
const question = 'What does /w/a.txt say?';

async function main() {
  const out = {};
  const r1 = await client.responses.create({ model, input: question, tools, store: false });
  const call = r1.output.find((i) => i.type === 'function_call');
  const r2 = await client.responses.create({
    model, tools, store: false,
    input: [{ role: 'user', content: question }, ...r1.output, { type: 'function_call_output', call_id: call.call_id, output: 'hello from a.txt' }],
  });
  out.stateless = { first: r1, second: r2, text: r2.output_text };

  const events = [];
  const s = client.responses.stream({ model, input: question, tools });
  s.on('event', (e) => events.push(e.type));
  const f = await s.finalResponse();
  const fcall = f.output.find((i) => i.type === 'function_call');
  const r3 = await client.responses.create({
    model, tools, previous_response_id: f.id,
    input: [{ type: 'function_call_output', call_id: fcall.call_id, output: 'hello from a.txt' }],
  });
  out.stateful = { first: f, events, second: r3, text: r3.output_text };

  try {
    await client.responses.create({ model, input: question, tools, tool_choice: { type: 'function', name: 'nope' } });
    out.error = 'no error';
  } catch (e) {
    out.error = { status: e.status, type: e.type, message: e.message };
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
