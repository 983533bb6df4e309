/**
 * What a person sees on Slack, for the Test chat: Slack mrkdwn and Block Kit drawn as DOM nodes.
 * Text always goes in as text (never as HTML), so nothing a flow or a person typed can run in the
 * editor. Block Kit has dozens of element types; the common ones are drawn, any other is a plain
 * placeholder naming its type, so a card never shows as JSON. Buttons and menus are drawn by the
 * caller (`actions(block, elements)`), which knows whether the Session waits for them.
 */
(function () {
  if (window.ChannelSessionsPreview) return;

  /** Slack's three escapes (the only HTML entities Slack sends). */
  function unescape(text) {
    return String(text).replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  }

  function safeHref(url) {
    return /^(https?:|mailto:)/i.test(url) ? url : null;
  }

  /** `<…>`: a link, a mention of a user or a channel, or a special mention. */
  function angle(inner, names) {
    var bar = inner.indexOf('|');
    var target = bar === -1 ? inner : inner.slice(0, bar);
    var label = bar === -1 ? '' : inner.slice(bar + 1);
    if (target.charAt(0) === '@') {
      var id = target.slice(1);
      return $('<span class="cs-md-mention"></span>')
        .text('@' + (label || (names && names[id]) || id))
        .attr('title', id);
    }
    if (target.charAt(0) === '#') return $('<span class="cs-md-mention"></span>').text('#' + (label || target.slice(1)));
    if (target.charAt(0) === '!') {
      var special = target.slice(1).split('^')[0];
      return $('<span class="cs-md-mention"></span>').text(label || '@' + special);
    }
    var href = safeHref(unescape(target));
    if (!href) return document.createTextNode(unescape(label || target));
    return $('<a target="_blank" rel="noopener noreferrer"></a>')
      .attr('href', href)
      .text(unescape(label || target));
  }

  // As Slack reads them: a style's marks stand at word edges (snake_case_names stay as they are).
  var INLINE = /<([^<>\n]+)>|`([^`\n]+)`|(?<![\w*])\*([^*\n]+)\*(?![\w*])|(?<![\w_])_([^_\n]+)_(?![\w_])|(?<![\w~])~([^~\n]+)~(?![\w~])/g;

  /** One line's inline formatting, appended to `into`. */
  function inline(text, into, names) {
    var last = 0;
    var m;
    // A regex of its own per call: the styles nest, and a shared one's lastIndex would be moved under it.
    var re = new RegExp(INLINE.source, 'g');
    while ((m = re.exec(text))) {
      var start = m.index;
      if (start > last) into.append(document.createTextNode(unescape(text.slice(last, start))));
      if (m[1] !== undefined) into.append(angle(m[1], names));
      else if (m[2] !== undefined) into.append($('<code class="cs-md-code"></code>').text(unescape(m[2])));
      else {
        var tag = m[3] !== undefined ? 'b' : m[4] !== undefined ? 'i' : 's';
        var el = $('<' + tag + '></' + tag + '>');
        inline(m[3] !== undefined ? m[3] : m[4] !== undefined ? m[4] : m[5], el, names);
        into.append(el);
      }
      last = re.lastIndex;
    }
    if (last < text.length) into.append(document.createTextNode(unescape(text.slice(last))));
  }

  /**
   * Slack mrkdwn: *bold*, _italic_, ~strike~, `code`, ```preformatted```, > quotes, links and
   * mentions (`names` maps user ids to names where the chat knows them).
   */
  function mrkdwn(text, names) {
    var box = $('<span class="cs-md"></span>');
    String(text === undefined || text === null ? '' : text)
      .split('```')
      .forEach(function (part, i) {
        if (i % 2 === 1) {
          $('<pre class="cs-md-pre"></pre>')
            .text(unescape(part.replace(/^\n/, '').replace(/\n$/, '')))
            .appendTo(box);
          return;
        }
        var lines = part.split('\n');
        lines.forEach(function (line, j) {
          var quote = /^(&gt;|>) ?/.exec(line);
          if (quote) {
            inline(line.slice(quote[0].length), $('<span class="cs-md-quote"></span>').appendTo(box), names);
            return;
          }
          inline(line, box, names);
          if (j < lines.length - 1) box.append(document.createTextNode('\n'));
        });
      });
    return box;
  }

  /** A text object: plain_text as it is, mrkdwn rendered. */
  function textObject(t, names) {
    if (!t) return $('<span></span>');
    if (typeof t === 'string') return mrkdwn(t, names);
    if (t.type === 'mrkdwn') return mrkdwn(t.text, names);
    return $('<span></span>').text(typeof t.text === 'string' ? t.text : '');
  }

  function image(url, alt, cls) {
    var href = safeHref(String(url || ''));
    if (!href) return $('<span class="cs-card-unknown"></span>').text('[' + (alt || 'image') + ']');
    return $('<img>')
      .addClass(cls)
      .attr('src', href)
      .attr('alt', alt || '')
      .attr('title', alt || '');
  }

  function unknown(type) {
    return $('<div class="cs-card-unknown"></div>').text('[' + (type || 'block') + ']');
  }

  /** A rich_text block's sections, lists, quotes and preformatted parts, as text with its styles. */
  function richText(elements) {
    var box = $('<div class="cs-card-text"></div>');
    (Array.isArray(elements) ? elements : []).forEach(function (part) {
      var into =
        part.type === 'rich_text_quote'
          ? $('<span class="cs-md-quote"></span>')
          : part.type === 'rich_text_preformatted'
            ? $('<pre class="cs-md-pre"></pre>')
            : $('<div></div>');
      if (part.type === 'rich_text_list') {
        (part.elements || []).forEach(function (item, i) {
          var line = $('<div></div>').text(part.style === 'ordered' ? i + 1 + '. ' : '• ');
          richRun(item.elements, line);
          box.append(line);
        });
        return;
      }
      richRun(part.elements, into);
      box.append(into);
    });
    return box;
  }

  function richRun(runs, into) {
    (Array.isArray(runs) ? runs : []).forEach(function (r) {
      var node;
      if (r.type === 'text') node = $('<span></span>').text(r.text || '');
      else if (r.type === 'link')
        node = safeHref(String(r.url || ''))
          ? $('<a target="_blank" rel="noopener noreferrer"></a>')
              .attr('href', r.url)
              .text(r.text || r.url)
          : $('<span></span>').text(r.text || '');
      else if (r.type === 'user') node = $('<span class="cs-md-mention"></span>').text('@' + r.user_id);
      else if (r.type === 'channel') node = $('<span class="cs-md-mention"></span>').text('#' + r.channel_id);
      else if (r.type === 'emoji')
        node = $('<span></span>').text(
          r.unicode
            ? String.fromCodePoint.apply(
                null,
                String(r.unicode)
                  .split('-')
                  .map(function (h) {
                    return parseInt(h, 16);
                  }),
              )
            : ':' + r.name + ':',
        );
      else if (r.type === 'broadcast') node = $('<span class="cs-md-mention"></span>').text('@' + r.range);
      else node = $('<span></span>').text('[' + r.type + ']');
      var s = r.style || {};
      if (s.bold) node = $('<b></b>').append(node);
      if (s.italic) node = $('<i></i>').append(node);
      if (s.strike) node = $('<s></s>').append(node);
      if (s.code) node = $('<code class="cs-md-code"></code>').append(node);
      into.append(node);
    });
  }

  /**
   * A Block Kit message as a card. `actions(block, elements)` draws the interactive elements of
   * an actions block, or of a section's accessory, and returns a node (or nothing).
   */
  function blocks(list, options) {
    var names = (options && options.names) || {};
    var actions =
      (options && options.actions) ||
      function () {
        return null;
      };
    var card = $('<div class="cs-card"></div>');
    (Array.isArray(list) ? list : []).forEach(function (b) {
      var type = b && b.type;
      if (type === 'header') card.append($('<div class="cs-card-header"></div>').append(textObject(b.text, names)));
      else if (type === 'divider') card.append('<hr class="cs-card-divider">');
      else if (type === 'image') {
        var fig = $('<div class="cs-card-image"></div>');
        if (b.title) fig.append($('<div class="cs-card-image-title"></div>').append(textObject(b.title, names)));
        fig.append(image(b.image_url || (b.slack_file && b.slack_file.url), b.alt_text, 'cs-card-img'));
        card.append(fig);
      } else if (type === 'context') {
        var ctx = $('<div class="cs-card-context"></div>');
        (b.elements || []).forEach(function (el) {
          ctx.append(el && el.type === 'image' ? image(el.image_url, el.alt_text, 'cs-card-context-img') : textObject(el, names));
        });
        card.append(ctx);
      } else if (type === 'section') {
        var section = $('<div class="cs-card-section"></div>');
        var body = $('<div class="cs-card-section-body"></div>').appendTo(section);
        if (b.text) body.append($('<div class="cs-card-text"></div>').append(textObject(b.text, names)));
        if (Array.isArray(b.fields) && b.fields.length) {
          var fields = $('<div class="cs-card-fields"></div>').appendTo(body);
          b.fields.forEach(function (f) {
            fields.append($('<div class="cs-card-field"></div>').append(textObject(f, names)));
          });
        }
        if (b.accessory && b.accessory.type === 'image') section.append(image(b.accessory.image_url, b.accessory.alt_text, 'cs-card-thumb'));
        else if (b.accessory) body.append(actions(b, [b.accessory]) || unknown(b.accessory.type));
        card.append(section);
      } else if (type === 'actions') card.append(actions(b, b.elements || []) || unknown(type));
      else if (type === 'rich_text') card.append(richText(b.elements));
      else if (type === 'markdown') card.append($('<div class="cs-card-text"></div>').text(b.text || ''));
      else card.append(unknown(type));
    });
    return card;
  }

  window.ChannelSessionsPreview = { mrkdwn: mrkdwn, blocks: blocks, textObject: textObject };
})();
