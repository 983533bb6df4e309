/**
 * Editor helpers shared by every node set of the package. Node-RED serves this folder at
 * resources/@channel-sessions/node-red/; each set's html loads it before its own definitions.
 */
(function () {
  // Every node set's html loads this file; the first copy serves them all.
  if (window.ChannelSessionsEditor) return;

  // Typed inputs: a field's text (str) or a value read from msg/flow/global/env at run time.
  const FIELD_TYPES = ['str', 'msg', 'flow', 'global', 'env'];

  // The type being edited when the dialog is open, else the saved one; none (a flow saved before typed inputs) is str.
  function fieldType(node, typeField) {
    const input = $('#node-input-' + typeField);
    return (input.length ? input.val() : node[typeField]) || 'str';
  }

  /** An Environment token: 24 random bytes as base64url (192 bits, URL-safe; an Environment token is to be at least 128 bits, too long to guess). */
  function newToken() {
    const bytes = new Uint8Array(24);
    crypto.getRandomValues(bytes);
    let text = '';
    bytes.forEach(function (b) {
      text += String.fromCharCode(b);
    });
    return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  const ENVIRONMENT_TYPES = ['teamchat-environment', 'telco-voice-environment', 'telco-messaging-environment'];

  /**
   * An Environment imported (an example, a pasted flow) or copied gets its token at once, as one
   * made with "Add new" does when its dialog opens: it then deploys with working inbound URLs
   * instead of a "No token" warning. One the runtime already holds keeps its own: the editor
   * loads deployed nodes without credentials, so the runtime is asked first (and when it cannot
   * answer, nothing is changed: its dialog still makes one).
   */
  RED.events.on('nodes:add', function (node) {
    if (ENVIRONMENT_TYPES.indexOf(node.type) < 0 || (node.credentials && node.credentials.token)) return;
    $.ajax({ url: 'credentials/' + node.type + '/' + encodeURIComponent(node.id), dataType: 'json' }).done(function (held) {
      if (!held || !held.token) giveToken(node);
    });
  });

  function giveToken(node) {
    if (!RED.nodes.node(node.id) || (node.credentials && node.credentials.token)) return;
    node.credentials = node.credentials || {};
    // Sent with the next deploy like any credential typed in; the import already made the flows dirty.
    node.credentials.token = newToken();
    node.changed = true;
  }

  window.ChannelSessionsEditor = {
    ENVIRONMENT_TYPES: ENVIRONMENT_TYPES,
    FIELD_TYPES: FIELD_TYPES,
    /** Store variable fields take a bare name (a dotted path at most), never `{braces}`. */
    bare: function (v) {
      return !v || /^[A-Za-z_$][\w$-]*(\.[\w$-]+)*$/.test(v);
    },
    /** Output labels of every Task: 1 = done, 2 = error branch. */
    doneOrError: function (i) {
      return i === 0 ? this._('common.outputs.done') : this._('common.outputs.error');
    },
    fieldType: fieldType,
    /** Text keeps its own check; a msg/flow/global/env value is only known at run time, so it only needs a property name. */
    typed: function (typeField, check) {
      return function (v) {
        const type = fieldType(this, typeField);
        if (type === 'str') return check ? check.call(this, v) : true;
        if (type === 'msg') return !!v && RED.utils.validatePropertyExpression(v);
        return !!v;
      };
    },
    typedField: function (prop) {
      $('#node-input-' + prop).typedInput({ default: 'str', types: FIELD_TYPES, typeField: '#node-input-' + prop + 'Type' });
    },
    /** A start's canvas label: its name, else its kind and the Environment it serves ("SMS start: Survey numbers"). */
    startLabel: function (node, kind) {
      if (node.name) return node.name;
      const env = node.environment && RED.nodes.node(node.environment);
      return env ? kind + ': ' + RED.utils.getNodeLabel(env, env.type) : kind;
    },
    /** How a typed field shows in a node label: `msg.agent`, or the text itself. */
    shown: function (value, type) {
      return type && type !== 'str' ? type + '.' + value : value;
    },
    /** A route's full URL from the public base URL and Node-RED's httpNodeRoot. */
    routeUrl: function (base, path) {
      const root = (RED.settings.httpNodeRoot || '/').replace(/\/+$/, '');
      return (base || '').trim().replace(/\/+$/, '') + root + path;
    },
    newToken: newToken,
    /** Copy buttons carry `data-target` naming the element (text or input) whose value they copy. */
    copyButtons: function (selector) {
      $(selector).on('click', function (e) {
        e.preventDefault();
        const target = $('#' + $(this).data('target'));
        const text = target.is('input, textarea') ? target.val() : target.text();
        RED.clipboard.copyText(text, $(this), 'clipboard.copyMessageValue');
      });
    },
  };
})();
