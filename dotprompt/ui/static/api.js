// The server's JSON API. State-changing calls carry the session's CSRF token in a header.

let session = null;

export function getSession() {
  if (!session) session = get("/api/session"); // one request, however many callers wait for it
  return session;
}

export class ApiError extends Error {
  constructor(error) {
    super(error && error.message ? error.message : "request failed");
    this.type = error && error.type;
  }
}

async function answer(response) {
  const data = await response.json().catch(() => ({ error: { type: "BadAnswer", message: `HTTP ${response.status}` } }));
  if (!response.ok) throw new ApiError(data.error);
  return data;
}

export async function get(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""));
  const url = query.toString() ? `${path}?${query}` : path;
  return answer(await fetch(url, { credentials: "same-origin" }));
}

export async function post(path, body) {
  const { token } = await getSession();
  return answer(await fetch(path, {
    method: "POST", credentials: "same-origin",
    headers: { "content-type": "application/json", "x-csrf-token": token },
    body: JSON.stringify(body),
  }));
}
