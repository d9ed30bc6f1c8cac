"""The reference VS Code bridge's faults (lmconform.bridge reads them): the bridge is the reference implementation of
this API, as the reference server is of the HTTP ones, and its faults stand in the one registry beside the server's."""
