//! The usage text (stdout for `--help`, stderr after an error).

/// The usage text.
pub const USAGE: &str = "\
Usage: mcp-bridge-vscode [options] -- <command> [args...]
       mcp-bridge-vscode [options] <url>
       mcp-bridge-vscode logout [--account <label>] [logout options] <url>
       mcp-bridge-vscode logout --all [logout options]
       mcp-bridge-vscode secret set|list|delete ...   (see: mcp-bridge-vscode secret --help)

A stdio MCP server of revision 2025-11-25 for VS Code. It starts <command> and speaks
revision 2026-07-28 to it over stdio (or relays an older one, see --upstream-revision), or
it speaks revision 2026-07-28 to the server at
<url> over Streamable HTTP. The URL uses https, or http with a loopback host (localhost,
a name that ends in .localhost, 127.0.0.0/8 or [::1]), and has no user and no fragment.

Options:
  --name <name>            The server name for VS Code when the upstream server sends no name.
                           Default: the file name of <command> without its extension, or the
                           host of <url>.
  --log-level <level>      The level of the log lines on stderr: err, warn, info or debug.
                           Default: info.
  --discover-timeout <s>   The time in seconds for the start of the upstream server (its
                           answer to server/discover), 1 to 86400. Default: 300 (60 with
                           --answer-initialize-after off).
  --answer-initialize-after <s>  When the upstream server has not answered server/discover
                           after this many seconds (1 to 86400), the bridge answers initialize
                           itself and the server's lists follow with a list change; off
                           waits for the server. Default: 40.
  --upstream-revision <r>  The revision of the upstream server: auto, 2026-07-28 or
                           2025-11-25 (also for older ones). Default: auto.
  --max-line-bytes <n>     The maximum length of one message in bytes, 1 to 1073741824.
                           Default: 67108864 (64 MiB).
  --help                   Show this text.
  --version                Show the version.

Options of the command form only:
  --secret-env <var>=<name>  The variable <var> of <command> gets the bridge's own secret
                           <name> (mcp-bridge-vscode secret set).

Options of the URL form only:
  --secret-header <name>=<text>  Send the header <name> with <text>, each {secret} replaced
                           by the bridge's own secret, only to the origin of <url>.
  --header-env <name>=<var>  Send the header <name> with the value of the environment
                           variable <var>. Use it for a secret.
  --header <name>:<value>  Send the header <name> with <value>. VS Code logs the command
                           line: never use it for a secret.
  --max-response-bytes <n> The maximum length of one JSON response or one event of a stream,
                           1 to 1073741824. Default: 67108864 (64 MiB).
  --ca-file <path>         Also trust the CA certificates of this PEM file.
  --client-id <id>         The client ID that the authorization server issued.
  --client-issuer <url>    The issuer of --client-id.
  --client-metadata-url <url>  The URL of a client ID metadata document.
  --redirect-port <port>   The port of the redirect URI http://127.0.0.1:<port>/callback.
                           Default: 41894.
  --account <label>        The account of the stored sign-in: 1 to 64 letters, digits, -, .,
                           _, @ or +. Default: default.
  --token-store <store>    auto, keychain, file or memory. Default: auto.
  --token-key-file <path>  The file with the key of the file store.
  --no-browser             Do not open a browser; write the URL of the sign-in to stderr.
  --sign-in-timeout <s>    The time in seconds for the sign-in, 1 to 86400. Default: 300.

logout deletes the stored sign-in of the account for <url>, or with --all every stored
sign-in and the token directory. It never tells the authorization server. It takes --account,
--redirect-port, --token-store, --token-key-file, --ca-file and --log-level, with the values
of the server entry. Exit code: 0 deleted (also when there was nothing to delete), 1 a
deletion failed, 2 the arguments are not valid or the token store does not open.

The file store takes its key (64 hexadecimal digits) from MCP_BRIDGE_TOKEN_KEY or from
--token-key-file (a file that only your account can read), not both.

An option takes its value from the next argument or after an equals sign (--name x or
--name=x). When an option occurs two times, the last value applies. Each --header and each
--header-env adds one header. The options come before the URL.
";
