//! What a program gets told when it reaches for something the sandbox does not have. The
//! failure's kind never depends on this: only the message grows a sentence saying what is not
//! supported and what to write instead.

/// Node's built-in modules, by the names a program imports them under (with or without
/// `node:`).
const NODE_BUILTINS: &[&str] = &[
    "assert",
    "buffer",
    "child_process",
    "cluster",
    "crypto",
    "dgram",
    "dns",
    "events",
    "fs",
    "fs/promises",
    "http",
    "http2",
    "https",
    "module",
    "net",
    "os",
    "path",
    "perf_hooks",
    "process",
    "querystring",
    "readline",
    "stream",
    "string_decoder",
    "timers",
    "tls",
    "tty",
    "url",
    "util",
    "v8",
    "vm",
    "worker_threads",
    "zlib",
];

/// The hint for an import of `specifier`, when it names one of Node's built-in modules.
fn builtin_module_hint(specifier: &str) -> Option<&'static str> {
    let name = specifier.strip_prefix("node:").unwrap_or(specifier);
    (specifier.starts_with("node:") || NODE_BUILTINS.contains(&name)).then_some(
        "Node built-in modules are not available in the sandbox: programs reach the outside world only through the tools the host provides; fetch, URL, TextEncoder, crypto.subtle and timers are global",
    )
}

/// The specifier of a `No such module "…"` message.
fn missing_module(message: &str) -> Option<&str> {
    let rest = &message[message.find("No such module \"")? + "No such module \"".len()..];
    Some(&rest[..rest.find('"')?])
}

/// `message` with a sentence of help when it says the program used CommonJS, JSX or a Node
/// global; otherwise `message` unchanged. `syntax`: the program did not compile.
pub fn with_hint(message: String, code: &str, syntax: bool) -> String {
    let hint = if message.contains("require is not defined") {
        Some("CommonJS `require` is not supported: call the host's tools, or `import` one of the executor's modules (`modules` option)")
    } else if message.contains("module is not defined")
        || message.contains("exports is not defined")
    {
        Some("CommonJS `module.exports` is not supported: write an async arrow function, or an ES module whose default export is the entry function")
    } else if message.contains("process is not defined") {
        Some("Node's `process` is not available in the sandbox: pass values in `params`, and reach the outside through the host's tools")
    } else if message.contains("Buffer is not defined") {
        Some("Node's `Buffer` is not available in the sandbox: use Uint8Array with TextEncoder / TextDecoder, or atob / btoa")
    } else if syntax && looks_like_jsx(code) {
        Some("JSX is not supported: programs are JavaScript or TypeScript; build strings or plain objects instead")
    } else {
        missing_module(&message).and_then(builtin_module_hint)
    };
    match hint {
        Some(hint) => {
            let message = message.trim_end_matches('.');
            format!("{message}. {hint}")
        }
        None => message,
    }
}

/// Whether `code` has what only JSX has: a closing tag, a self-closing one, or a fragment
/// (a TypeScript generic `<T>` has none of them).
fn looks_like_jsx(code: &str) -> bool {
    code.contains("/>") || code.contains("</") || code.contains("<>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_of_node_builtins_are_explained() {
        let fs = with_hint("TypeError: No such module \"node:fs\".".into(), "", false);
        assert!(
            fs.starts_with("TypeError: No such module \"node:fs\". Node built-in"),
            "{fs}"
        );
        let cp = with_hint(
            "TypeError: No such module \"child_process\".".into(),
            "",
            false,
        );
        assert!(cp.contains("Node built-in"));
        let own = with_hint("TypeError: No such module \"util.js\".".into(), "", false);
        assert_eq!(own, "TypeError: No such module \"util.js\".");
    }

    #[test]
    fn hints_add_a_sentence_and_keep_the_message() {
        let m = with_hint("ReferenceError: require is not defined".into(), "", false);
        assert!(m.starts_with("ReferenceError: require is not defined. CommonJS"));
        let jsx = with_hint(
            "Unexpected token '<'".into(),
            "async () => <div>hi</div>",
            true,
        );
        assert!(jsx.contains("JSX is not supported"));
        let generic = with_hint("Unexpected token".into(), "async () => f<T>(1) <", true);
        assert_eq!(generic, "Unexpected token");
        assert_eq!(with_hint("Error: boom".into(), "", false), "Error: boom");
    }
}
