"""One vocabulary of generation events for every transport (chat chunks, chat bodies, Responses, JSON-RPC)."""
