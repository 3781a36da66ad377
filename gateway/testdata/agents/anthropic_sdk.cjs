// The official Anthropic SDK against ptk serve: create and stream, a tool
// round trip, a tool error, count_tokens, an error, the models. It prints
// what it saw as one JSON object; the Go test (TestSDKAnthropic) checks it.
const sdk = require('@anthropic-ai/sdk');
const Anthropic = sdk.default ?? sdk;

const client = new Anthropic({ baseURL: process.env.BASE_URL, apiKey: process.env.API_KEY, maxRetries: 0 });
const model = 'claude-sonnet-4-5';
const tools = [{
  name: 'Read', description: 'Read a file from the workspace.',
  input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
}];
const ask = { role: 'user', content: 'What does /w/a.txt say?' };

async function main() {
  const out = {};
  const m1 = await client.messages.create({ model, max_tokens: 1024, messages: [ask], tools });
  const use = m1.content.find((b) => b.type === 'tool_use');
  const m2 = await client.messages.create({
    model, max_tokens: 1024, tools,
    messages: [ask, { role: 'assistant', content: m1.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'hello from a.txt' }] }],
  });
  out.create = { first: m1, second: m2 };

  const events = [];
  const s1 = client.messages.stream({ model, max_tokens: 1024, messages: [ask], tools });
  s1.on('streamEvent', (e) => events.push(e.type));
  const f1 = await s1.finalMessage();
  const use2 = f1.content.find((b) => b.type === 'tool_use');
  let text = '';
  const s2 = client.messages.stream({
    model, max_tokens: 1024, tools,
    messages: [ask, { role: 'assistant', content: f1.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use2.id, is_error: true, content: [{ type: 'text', text: 'ENOENT: no such file' }] }] }],
  });
  s2.on('text', (t) => { text += t; });
  const f2 = await s2.finalMessage();
  out.stream = { first: f1, events, second: f2, text };

  out.count = await client.messages.countTokens({ model, messages: [ask], tools });
  try {
    await client.messages.create({ model, max_tokens: 10, messages: [ask], tools, tool_choice: { type: 'tool', name: 'Nope' } });
    out.error = 'no error';
  } catch (e) {
    out.error = { status: e.status, type: e.error?.error?.type, message: e.message };
  }
  const page = await client.models.list();
  out.models = page.data;
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
