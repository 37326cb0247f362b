"""The MCP server: agents capture and recall memories over the Model Context Protocol."""
