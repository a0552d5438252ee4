// A React page that streams from `modelstream serve` with the AI SDK's useChat (docs/frontends.md).
// Open it as index.html?model=chat&key=<a server key>; add &schema=1 to ask for a structured
// answer and watch its value grow. Served from the server's origin, or give &server=<its URL>.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(location.search);
const server = params.get("server") ?? "";

// a structured answer: the server sends its value so far as a `data-object` part
const forecast = {
  type: "json_schema",
  json_schema: {
    name: "forecast",
    schema: {
      type: "object",
      properties: {
        city: { type: "string" },
        days: {
          type: "array",
          items: {
            type: "object",
            properties: { day: { type: "string" }, high: { type: "number" } },
            required: ["day", "high"],
          },
        },
      },
      required: ["city", "days"],
    },
  },
};

const transport = new DefaultChatTransport({
  api: `${server}/v1/stream/ai-sdk`,
  headers: { authorization: `Bearer ${params.get("key")}` },
  body: {
    model: params.get("model") ?? "chat",
    config: params.get("schema") ? { response_format: forecast } : {},
  },
});

function Chat() {
  // resume: after a reload, the chat's running (or just finished) answer streams in again
  const { messages, sendMessage, resumeStream, status, error } = useChat({
    id: params.get("chat") ?? "demo-chat",
    transport,
    resume: true,
  });
  const [input, setInput] = useState("");
  const answer = messages.findLast((message) => message.role === "assistant");
  const text = (answer?.parts ?? [])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
  const object = answer?.parts.find((part) => part.type === "data-object")?.data;
  const busy = status === "submitted" || status === "streaming";
  return (
    <main>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          sendMessage({ text: input });
          setInput("");
        }}
      >
        <input id="prompt" value={input} onChange={(event) => setInput(event.target.value)} />
        <button id="send" disabled={busy}>Send</button>
        <button id="resume" type="button" disabled={busy} onClick={() => resumeStream()}>
          Resume
        </button>
      </form>
      <p id="status">{status}</p>
      {error && <p id="error">{error.message}</p>}
      <pre id="answer">{text}</pre>
      {object !== undefined && <pre id="object">{JSON.stringify(object, null, 2)}</pre>}
    </main>
  );
}

createRoot(document.getElementById("root")).render(<Chat />);
