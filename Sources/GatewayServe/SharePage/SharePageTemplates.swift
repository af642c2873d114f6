import Crypto
import Foundation
import GatewayCore
import Mustache

/// The share page's templates (Mustache, rendered by hummingbird-project's swift-mustache, which
/// escapes every `{{value}}` for HTML), its style sheet and its icons. Everything a page needs is
/// in the page: no script, no font, no asset from anywhere else, and a Content-Security-Policy
/// that allows only the page's own style (by hash) and the server's own images.
enum SharePageTemplates {
    static let library: MustacheLibrary = {
        MustacheContentTypes.register(Escaping(), named: Escaping.name)
        var library = MustacheLibrary()
        do {
            try library.register(head, named: "head")
            try library.register(header, named: "header")
            try library.register(folder, named: "folder")
            try library.register(file, named: "file")
            try library.register(message, named: "message")
        } catch {
            preconditionFailure("a share page template does not parse: \(error)")
        }
        return library
    }()

    /// HTML escaping by Unicode scalar: swift-mustache's own escapes grapheme clusters, so a quote
    /// followed by a combining mark passes unescaped and ends an attribute. Control characters and
    /// the bidirectional overrides and isolates (which make `invoice\u{202E}fdp.exe` read as a
    /// PDF) are shown as U+FFFD.
    struct Escaping: MustacheContentType {
        static let name = "GATEWAY_HTML"

        func escapeText(_ text: String) -> String { SharePageTemplates.escape(text) }
    }

    static func escape(_ text: String) -> String {
        let shown = String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
                || (0x7F...0x9F).contains(scalar.value) ? "\u{FFFD}" : scalar
        }))
        return XMLText.escaped(shown, replacingInvalid: true)
    }

    /// Every template starts by naming ``Escaping``.
    private static let pragma = "{{% CONTENT_TYPE:GATEWAY_HTML}}"

    /// Renders one of `folder`, `file`, `message` with `context`.
    static func render(_ name: String, _ context: [String: Any]) -> String {
        var context = context
        context["css"] = css
        context["icons"] = icons
        return library.render(context, withTemplate: name) ?? ""
    }

    /// The policy every page is sent with: the style sheet by its hash, images from this server.
    static let contentSecurityPolicy: String = {
        let digest = Data(SHA256.hash(data: Data(css.utf8))).base64EncodedString()
        return "default-src 'none'; img-src 'self'; style-src 'sha256-\(digest)'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors 'none'; sandbox allow-downloads allow-popups allow-popups-to-escape-sandbox"
    }()

    static let head = pragma + """
    <!DOCTYPE html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="color-scheme" content="light dark">
    <meta name="referrer" content="no-referrer">
    <meta name="robots" content="noindex, nofollow">
    <title>{{pageTitle}}</title>
    <style>{{{css}}}</style>
    </head>
    <body>
    {{{icons}}}
    """

    static let header = pragma + """
    <header class="top">
    <div class="heading">
    <svg class="icon big" aria-hidden="true"><use href="#i-{{icon}}"/></svg>
    <div>
    <h1 dir="auto">{{title}}</h1>
    {{#subtitle}}<p class="subtitle">{{subtitle}}</p>{{/subtitle}}
    </div>
    </div>
    {{#download}}<a class="button download{{#all}}-all{{/all}}" href="{{href}}" download>{{label}}</a>{{/download}}
    </header>
    {{#hasCrumbs}}
    <nav class="breadcrumbs" aria-label="Folders">
    <ol>{{#crumbs}}<li>{{#href}}<a href="{{href}}" dir="auto">{{name}}</a>{{/href}}{{^href}}<span aria-current="page" dir="auto">{{name}}</span>{{/href}}</li>{{/crumbs}}</ol>
    </nav>
    {{/hasCrumbs}}
    """

    static let folder = pragma + """
    {{> head}}
    {{> header}}
    <main>
    <div class="tools">
    <p class="count">{{count}}</p>
    <nav class="views" aria-label="View">
    {{#views}}{{#current}}<span aria-current="page">{{label}}</span>{{/current}}{{^current}}<a href="{{href}}">{{label}}</a>{{/current}} {{/views}}
    </nav>
    </div>
    {{#gallery}}
    <nav class="sorts" aria-label="Sort">Sort by {{#sorts}}<a class="sort{{#current}} current{{/current}}" href="{{href}}"{{#current}} aria-current="true"{{/current}}>{{label}}{{{arrow}}}</a> {{/sorts}}</nav>
    <ul class="gallery">
    {{#rows}}<li data-kind="{{kind}}"><a href="{{href}}">{{#thumb}}<img src="{{thumb}}" loading="lazy" alt="" width="256" height="256">{{/thumb}}{{^thumb}}<svg class="icon tile" aria-hidden="true"><use href="#i-{{icon}}"/></svg>{{/thumb}}<span class="caption" dir="auto">{{name}}</span></a></li>
    {{/rows}}
    </ul>
    {{/gallery}}
    {{^gallery}}
    <table class="listing">
    <caption class="hidden">Contents of {{title}}, sorted by {{sortLabel}}</caption>
    <thead><tr>{{#sorts}}<th scope="col" class="{{key}}"{{#current}} aria-sort="{{ariaSort}}"{{/current}}><a class="sort" href="{{href}}">{{label}}{{{arrow}}}</a></th>{{/sorts}}</tr></thead>
    <tbody>
    {{#rows}}<tr class="item" data-kind="{{kind}}"><td class="name"><a href="{{href}}">{{#thumb}}<img class="thumb" src="{{thumb}}" loading="lazy" alt="" width="40" height="40">{{/thumb}}{{^thumb}}<svg class="icon" aria-hidden="true"><use href="#i-{{icon}}"/></svg>{{/thumb}}<span dir="auto">{{name}}</span></a></td><td class="size" data-bytes="{{bytes}}">{{sizeText}}</td><td class="date">{{#iso}}<time datetime="{{iso}}">{{dateText}}</time>{{/iso}}{{^iso}}—{{/iso}}</td></tr>
    {{/rows}}
    </tbody>
    </table>
    {{/gallery}}
    {{^rows}}<p class="empty">This folder is empty.</p>{{/rows}}
    <nav class="pages" aria-label="Pages">
    {{#prev}}<a rel="prev" href="{{prev}}">← Previous</a>{{/prev}}
    {{#next}}<a rel="next" href="{{next}}">Next →</a>{{/next}}
    </nav>
    </main>
    <footer>Shared with gateway</footer>
    </body>
    </html>
    """

    static let file = pragma + """
    {{> head}}
    {{> header}}
    <main class="file">
    {{#preview}}<figure class="preview"><img class="preview" src="{{preview}}" alt="Preview of {{title}}"></figure>{{/preview}}
    <dl class="metadata">
    {{#facts}}<div><dt>{{label}}</dt><dd dir="auto">{{value}}</dd></div>
    {{/facts}}
    </dl>
    </main>
    <footer>Shared with gateway</footer>
    </body>
    </html>
    """

    static let message = pragma + """
    {{> head}}
    <main class="message">
    <svg class="icon big" aria-hidden="true"><use href="#i-{{icon}}"/></svg>
    <h1>{{title}}</h1>
    <p>{{text}}</p>
    </main>
    </body>
    </html>
    """

    /// Line icons (24×24, stroked with the text colour), used with `<use href="#i-NAME">`.
    static let icons = """
    <svg xmlns="http://www.w3.org/2000/svg" class="sprite" aria-hidden="true">
    <symbol id="i-folder" viewBox="0 0 24 24"><path d="M3 6.5A1.5 1.5 0 0 1 4.5 5H9l2 2h8.5A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z"/></symbol>
    <symbol id="i-file" viewBox="0 0 24 24"><path d="M6 3h8l4 4v14H6z M14 3v4h4"/></symbol>
    <symbol id="i-image" viewBox="0 0 24 24"><path d="M4 5h16v14H4z M4 16l5-5 4 4 3-3 4 4"/><circle cx="15.5" cy="8.5" r="1.5"/></symbol>
    <symbol id="i-video" viewBox="0 0 24 24"><path d="M3 6h13v12H3z M16 10l5-3v10l-5-3"/></symbol>
    <symbol id="i-audio" viewBox="0 0 24 24"><path d="M9 18V5l11-2v13 M9 18a3 3 0 1 1-3-3 3 3 0 0 1 3 3z M20 16a3 3 0 1 1-3-3 3 3 0 0 1 3 3z"/></symbol>
    <symbol id="i-document" viewBox="0 0 24 24"><path d="M6 3h8l4 4v14H6z M14 3v4h4 M9 12h6 M9 15h6 M9 18h4"/></symbol>
    <symbol id="i-archive" viewBox="0 0 24 24"><path d="M4 4h16v4H4z M5 8h14v12H5z M10 12h4"/></symbol>
    <symbol id="i-expired" viewBox="0 0 24 24"><circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/></symbol>
    <symbol id="i-missing" viewBox="0 0 24 24"><circle cx="11" cy="11" r="7"/><path d="M16 16l5 5 M8.5 8.5l5 5 M13.5 8.5l-5 5"/></symbol>
    <symbol id="i-invalid" viewBox="0 0 24 24"><path d="M12 3l9 16H3z M12 10v4 M12 16.5v.5"/></symbol>
    </svg>
    """

    static let css = """
    :root{--bg:#fff;--fg:#1d1f23;--muted:#5a6270;--line:#e3e6ea;--accent:#0b5cad;--accent-fg:#fff;--hover:#f3f6fa;--tile:#f6f7f9}
    @media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e8eaed;--muted:#a6adb8;--line:#2e333a;--accent:#7db4f0;--accent-fg:#0d1117;--hover:#20242a;--tile:#1e2227}}
    *{box-sizing:border-box}
    html{-webkit-text-size-adjust:100%}
    body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;overflow-wrap:anywhere}
    .sprite{display:none}
    .icon{width:22px;height:22px;flex:none;fill:none;stroke:currentColor;stroke-width:1.6;stroke-linejoin:round;stroke-linecap:round;color:var(--muted)}
    .icon.big{width:40px;height:40px;color:var(--accent)}
    .icon.tile{width:64px;height:64px;margin:auto}
    a{color:var(--accent)}
    a:focus-visible,.button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
    .top{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:center;justify-content:space-between;padding:20px clamp(12px,4vw,40px) 8px}
    .heading{display:flex;gap:12px;align-items:center;min-width:0}
    h1{font-size:1.5rem;margin:0;line-height:1.25}
    .subtitle{margin:2px 0 0;color:var(--muted)}
    .button{display:inline-block;padding:10px 18px;border-radius:8px;background:var(--accent);color:var(--accent-fg);text-decoration:none;font-weight:600;white-space:nowrap}
    .breadcrumbs{padding:0 clamp(12px,4vw,40px)}
    .breadcrumbs ol{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px;color:var(--muted)}
    .breadcrumbs li+li::before{content:"/";margin-right:4px}
    main{padding:8px clamp(12px,4vw,40px) 24px}
    .tools{display:flex;flex-wrap:wrap;justify-content:space-between;gap:8px;color:var(--muted)}
    .tools p{margin:8px 0}
    .views{display:flex;gap:12px;align-items:center}
    .views span{font-weight:600;color:var(--fg)}
    table.listing{width:100%;border-collapse:collapse;table-layout:auto}
    .listing th{text-align:left;font-weight:600;color:var(--muted);border-bottom:1px solid var(--line);padding:8px 6px;white-space:nowrap}
    .listing th a{color:inherit;text-decoration:none}
    .listing th a:hover{text-decoration:underline}
    .listing td{border-bottom:1px solid var(--line);padding:6px;vertical-align:middle}
    .listing tr.item:hover{background:var(--hover)}
    .listing td.name a{display:flex;align-items:center;gap:10px;color:var(--fg);text-decoration:none;min-width:0}
    .listing td.name a:hover span{text-decoration:underline}
    .listing .size,.listing .date{white-space:nowrap;color:var(--muted);font-variant-numeric:tabular-nums}
    .listing td.size,.listing th.size{text-align:right}
    img.thumb{width:40px;height:40px;object-fit:cover;border-radius:4px;flex:none;background:var(--tile)}
    .hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
    .sorts{margin:4px 0 12px;color:var(--muted)}
    .sort.current{font-weight:600}
    ul.gallery{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:12px}
    .gallery li a{display:flex;flex-direction:column;gap:6px;color:var(--fg);text-decoration:none;background:var(--tile);border-radius:8px;padding:8px;height:100%}
    .gallery img{width:100%;height:auto;aspect-ratio:1;object-fit:cover;border-radius:4px}
    .gallery .caption{font-size:.9rem;text-align:center}
    .pages{display:flex;justify-content:space-between;margin-top:16px}
    .pages a[rel=next]{margin-left:auto}
    .empty{color:var(--muted)}
    figure.preview{margin:0 0 16px}
    img.preview{display:block;max-width:100%;height:auto;max-height:75vh;border-radius:6px;background:var(--tile)}
    dl.metadata{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:12px;margin:0}
    dl.metadata div{background:var(--tile);border-radius:8px;padding:10px 12px}
    dt{color:var(--muted);font-size:.85rem}
    dd{margin:0;font-weight:600}
    .message{max-width:36rem;margin:12vh auto 0;text-align:center}
    .message p{color:var(--muted)}
    footer{padding:16px clamp(12px,4vw,40px) 32px;color:var(--muted);font-size:.85rem}
    @media (max-width:600px){.listing th.date,.listing td.date{display:none}h1{font-size:1.25rem}.top{padding-top:14px}}
    """
}
