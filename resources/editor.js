/**
 * Editor helpers shared by every node set of the package. Node-RED serves this folder at
 * resources/@channel-sessions/node-red/; each set's html loads it before its own definitions.
 */
(function () {
  // Typed inputs: a field's text (str) or a value read from msg/flow/global/env at run time.
  const FIELD_TYPES = ['str', 'msg', 'flow', 'global', 'env'];

  // The type being edited when the dialog is open, else the saved one; none (a flow saved before typed inputs) is str.
  function fieldType(node, typeField) {
    const input = $('#node-input-' + typeField);
    return (input.length ? input.val() : node[typeField]) || 'str';
  }

  window.ChannelSessionsEditor = {
    CATEGORY: 'channel sessions',
    FIELD_TYPES: FIELD_TYPES,
    /** Store variable fields take a bare name (a dotted path at most), never `{braces}`. */
    bare: function (v) { return !v || /^[A-Za-z_$][\w$-]*(\.[\w$-]+)*$/.test(v); },
    /** Output labels of every Task: 1 = done, 2 = error branch. */
    doneOrError: function (i) { return i === 0 ? this._('common.outputs.done') : this._('common.outputs.error'); },
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
    /** How a typed field shows in a node label: `msg.agent`, or the text itself. */
    shown: function (value, type) { return type && type !== 'str' ? type + '.' + value : value; },
    /** A route's full URL from the public base URL and Node-RED's httpNodeRoot. */
    routeUrl: function (base, path) {
      const root = (RED.settings.httpNodeRoot || '/').replace(/\/+$/, '');
      return (base || '').trim().replace(/\/+$/, '') + root + path;
    },
    /** An Environment token: 24 random bytes as base64url (192 bits, URL-safe; CONTRACT asks at least 128). */
    newToken: function () {
      const bytes = new Uint8Array(24);
      crypto.getRandomValues(bytes);
      let text = '';
      bytes.forEach(function (b) { text += String.fromCharCode(b); });
      return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    },
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
