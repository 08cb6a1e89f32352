#!/usr/bin/env node
// Records what upstream's web_fetch makes of HTML pages, for the tests of
// crates/tools/src/web/html: html-to-text 9.0.5 with upstream's two option sets.
// Needs html-to-text 9.0.5 (the oracle's install has it: NODE_PATH=<oracle>/node_modules).
//   node scripts/html-cases.js hand > crates/tools/src/web/html/upstream.json
//   node scripts/html-cases.js random N SEED > /tmp/random.json   (differential runs)
const { convert } = require('html-to-text');

const BASE = 'https://example.com/docs/';
const hidden = (html) => convert(html, {
  wordwrap: false,
  selectors: [{ selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' }],
});
const shown = (html) => convert(html, {
  wordwrap: false,
  selectors: [{ selector: 'a', options: { ignoreHref: false, baseUrl: BASE } }],
});

const HAND = [
  '<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Hello</h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p><script>var x = 1;</script></body></html>',
  '<h1>Title</h1><ul><li>one<li>two</ul><a href="https://e.x/">link</a>',
  '<p>a</p><div></div><p>b</p>', 'a <div>b</div>c', 'a <div></div>c', '<p>one</p>\n\n<p>two</p>',
  '<title>Only &amp; title</title><p>x</p>', '<head><title>T</title></head><p>no body</p>',
  '<body>one</body><body>two</body>', '<div><body>inner</body></div>outer',
  '<ol><li>a</li><li>b</li></ol>', '<ol start="9"><li>a<li>b<li>c</ol>', '<ol type="a" start="26"><li>z<li>aa</ol>',
  '<ol type="I" start="3999"><li>x<li>y</ol>', '<ol type="i"><li>x<li>y<li>z<li>w</ol>', '<ol start="x"><li>a</ol>',
  '<ol start=" 0x10 "><li>a</ol>', '<ol start="-2"><li>a<li>b<li>c<li>d</ol>', '<ol start="1.5"><li>a<li>b</ol>',
  '<ol type="A" start="0"><li>a</ol>', '<ol type="I" start="0"><li>a</ol>', '<ol type="I" start="12345"><li>a</ol>',
  '<ul><li>a<ul><li>b<li>c</ul></li><li>d</ul>', '<ol><li>a<ol><li>b</ol><li>c</ol>', '<ul><li><p>para</p></li><li>x</li></ul>',
  '<ul>text<li>item</li><div>div</div><!-- c --></ul>', '<ul> \n </ul>after', '<ul><li></li><li></li></ul>x',
  '<blockquote><p>q1</p><p>q2</p></blockquote>', '<blockquote>\n\nx\n\n</blockquote>', '<blockquote><blockquote>deep</blockquote></blockquote>',
  '<pre>  code\n    indented &lt;x&gt;\n</pre>', '<pre><b>bold</b>\n<br>x<div>d</div></pre>', '<p>a<pre>b</pre>c</p>',
  'line<br>break<br/><br />x', '<p>a<br></p><p>b</p>', '<hr>', 'a<hr>b', '<h2>sub <i>title</i> ß</h2>text', '<h4>four</h4><h6>six</h6>',
  '<a href="#top">anchor</a> <a href="mailto:a@b.c">mail</a> <a href="">empty</a> <a>none</a>',
  '<a href="/abs">abs</a> <a href="rel/x">rel</a> <a href="//cdn.x/y">proto</a> <a href="https://o.x/">o</a>',
  '<a href="/x"></a>', '<a href="/x"><img src="i.png"></a>', '<a href="/x"><img src="i.png" alt="pic"></a>', '<a href="/x">A <b>B</b></a>',
  '<h1><a href="/x">Link in heading</a></h1>', '<a href="/x"><h1>heading in link</h1></a>', '<img src="/a.png" alt="alt text">', '<img alt="only alt">', '<img src="s.png">',
  '<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>', '<table><tr><td>a</td>\n<td>b</td></tr>\n<tr><td>c</td></tr></table>',
  'x &amp; y &lt;z&gt; &quot;q&quot; &#39;s&#39; &nbsp;nb &copy; &copy2 &notin; &notit; &amp &ampx &hellip &hellip; &fjlig;',
  '&#65;&#x42;&#X43;&#0;&#128;&#55296;&#1114112;&#; &#x; &#65 &#x41z &#99999999999999;', 'a&&amp;b', '&', 'x&', '&#', '&#x', '&am',
  '<a href="?a=1&amp;b=2&copy=3&lt">q</a>', '<img src="x" alt="&amp &amp; &lt;">', '<a href=/unq&amp;x>u</a>',
  '<p>A<!-- comment -->B</p>', '<!DOCTYPE html><p>d</p>', '<?xml version="1.0"?><p>pi</p>', '<![CDATA[cdata]]><p>c</p>', '<!---->x<!-- unterminated',
  '<P>UPPER</P><DIV>Div</DIV>', '<div/>after self-closed div', '<br/>x', '<svg><title>svg title</title><text>t</text></svg>after',
  '<script>if (a < b) { "</div>" }</script>after', '<style>x</style >y', '<scriptx>sx</scriptx>', '<textarea><b>t</b></textarea>',
  '<p>para<div>div closes p</div>', '</p>', 'a</p>b', '</br>', 'x</div>y', '<p>a<p>b<p>c', '<li>a<li>b', '<dt>t<dd>d<dt>t2',
  '<table><tr><td>a<td>b<tr><td>c</table>', '<select><option>o1<option>o2</select>', '<h1>h<p>p</h1>', '<p>x</P >y',
  'spaces   \t\n between\u200bzero\u00a0nbsp', '  leading and trailing  ', '<b>a</b><i>b</i> <u>c</u>', '<span> a </span><span> b </span>',
  '<div>a</div>\n<div>b</div>', '<div><div><div>nested</div></div></div>', '<section><article>x</article></section><footer>f</footer>',
  '<p>\u00e9\u00e8 \u4e2d\u6587 emoji \ud83d\ude00</p>', '<h1>stra\u00dfe \u0149</h1>', '<a href="/x">x</a><a href="/y">y</a>',
  '<div>a<br><br><br>b</div>', '<p>a</p><br><p>b</p>', '<br><br>x', 'x<br>', '<p></p><p></p>x', '<pre></pre>x', '<hr><hr>',
  '<wbr>a<wbr>b', '<a href="/x" href="/y">dup</a>', '<a HREF="/X">case</a>', "<a href='/sq'>sq</a>", '<a href=/x/>slash</a>',
  '<div class="a" id=b data-x>attrs</div>', '<img src="a" alt="b" src="c">', '<p>unclosed <b>bold <i>both', '<ul><li>a</ul></li>b',
  '<form><input value="v"><button>btn</button></form>', '<main><nav>n</nav><aside>s</aside><header>h</header></main>',
  '<ol><li><ol><li><ol><li>deep</ol></ol></ol>', '<ul><li>x<ol><li>y</ol>z</ul>',
  '<div>\r\nCRLF\r\n</div>', 'tab\there', 'a\fb', '<body><p>x</p></body>trailing', '<html><body>a</body></html>b',
  // A page cut inside a tag: htmlparser2 keeps the page's last UTF-16 unit.
  'a</b ', 'a<br/', 'x</div y="1"', 'a</b', 'a<br', '\u00e9</b \u20ac', 'x<p/', 'x</p\t', 'q</b \ud83d\ude00', '<p>t</p x', 'a<!--c', 'a<?x',
  '&amp</x ', 'a<b c=1/', '<ol start="0x1000000000000081"><li>a<li>b</ol>', '<ol start="0b101"><li>a</ol>', '<ol start="0o17"><li>a</ol>',
  // Cuts and quirks of the tokenizer, for the reader written from outputs (issue 45).
  'x&amp;abc&#x', 'a < b&#x', 'x&#12', '<title>a&#x', '<title>a &amp b</title>x', '<title>a<&amp;</title>', '<title>a</title&amp;</title>',
  '<p><a href="x&', '<p><a href="x&amp;y&#', '<p><a href=x&#1', '<p><a href="&amp', '<p>a<!', '<p>a<!x', '<p>a<!-', '<p>a<!--', '<p>a<![CDA',
  '<p>a<![CDATA[', '<p>a<?', '<p>a</', '<p>a</ ', '<p>a</1x', '<p>a<t', '<p>a<titl', '<p>a<scr', '<p>a<styl', '<p>a<tx', '<p>a<script',
  '<!>x>y', '<!->x>y', '<![x>y', '<![CDx>y', '<?>x', '</1>x', 'a</>b', 'a</ >b', '<a =x href=/y>t</a>', '<a b "c" href=/z>t</a>',
  '<a href="/1" href="/2" HREF=/3>t</a>', '<img alt=a/ src=b>x', '<script>a\x1c/script>b</script>c', '<style>a</style\x0cx>y',
  '<script>x</scriptx></script >y', '<svg><p/>x</svg>y', '<math><mi><p/>x</mi></math>', '</p></p>x', '<table><td>a<th>b<tr>c</table>',
  '<title>\ud83d\ude00</title', 'x</b \ud83d\ude00', '<p>&notit; &notin; &#x41 &#65x</p>',
];

function random(n, seed) {
  let s = seed >>> 0;
  const rnd = (k) => { s = (s * 1664525 + 1013904223) >>> 0; return s % k; };
  const pick = (a) => a[rnd(a.length)];
  const tags = ['p', 'div', 'span', 'b', 'a', 'img', 'br', 'hr', 'ul', 'ol', 'li', 'h1', 'h3', 'h5', 'pre', 'blockquote', 'table', 'tr', 'td', 'th',
    'section', 'body', 'head', 'title', 'script', 'style', 'svg', 'dt', 'dd', 'option', 'wbr', 'P', 'Div', 'code', 'em', 'nav', 'rb'];
  const texts = ['a', 'word', ' ', '  ', '\n', '\t', 'x y', ' lead', 'trail ', '&amp;', '&lt;', '&copy', '&notit;', '&#65;', '&#x1F600;', '&bogus;',
    '&', '\u00a0', '\u200b', 'Stra\u00dfe', '<', '>', '"', '&nbsp;', '&#128;', 'foo&bar', '\r\n'];
  const attrs = ['', ' href="/p"', ' href="#h"', ' href="mailto:m@x"', ' href="rel"', ' href=""', ' src="i.png"', ' alt="A"', ' src="/s" alt="t"',
    ' start="3"', ' type="a"', ' type="I"', ' start="0"', ' class=x', ' href=/u&amp;v', " href='/q'", ' x'];
  const out = [];
  for (let i = 0; i < n; i++) {
    let h = '';
    const len = 1 + rnd(40);
    for (let j = 0; j < len; j++) {
      const r = rnd(10);
      if (r < 4) h += pick(texts);
      else if (r < 7) h += '<' + pick(tags) + pick(attrs) + (rnd(8) === 0 ? '/' : '') + '>';
      else if (r < 9) h += '</' + pick(tags) + '>';
      else h += pick(['<!-- c -->', '<!doctype html>', '</p>', '</br>', '<?pi?>', '<!--', '<a', '< b', '</ >', '<p', '&#', '<![CDATA[x]]>']);
    }
    out.push(h);
  }
  return out;
}

const [mode, n, seed] = process.argv.slice(2);
const pages = mode === 'random' ? random(Number(n || 1000), Number(seed || 1)) : HAND;
// null: html-to-text throws (Roman numerals past 9999); toolbelt writes the number.
// A lone surrogate (half of a character, as `slice(-1)` can leave) is written as U+FFFD.
const tried = (f, html) => { try { return f(html).toWellFormed(); } catch (e) { return null; } };
const cases = pages.map((html) => ({ html, hidden: tried(hidden, html), shown: tried(shown, html) }));
process.stdout.write(JSON.stringify(cases, null, 1) + '\n');
