/*
 * WCAG 2.x contrast for the partner's accent colour (spec 2.7 gives only #rrggbb): the text on
 * an accent-coloured button is black or white, whichever contrasts more (one of them always
 * reaches 4.5:1), and the accent is used for text on white only when it is itself readable there.
 * Loaded by the login pages, and by the unit tests through module.exports.
 */
(function (root, factory) {
  var api = factory();
  if (typeof module === 'object' && module.exports) module.exports = api;
  else root.RmmContrast = api;
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  var HEX = /^#[0-9a-fA-F]{6}$/;
  var MIN_TEXT_RATIO = 4.5;

  function channel(v) {
    var c = v / 255;
    return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  }

  /** Relative luminance (WCAG 2.x) of a #rrggbb colour. */
  function luminance(hex) {
    if (!HEX.test(hex)) throw new Error('not a #rrggbb colour: ' + hex);
    var n = parseInt(hex.slice(1), 16);
    return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
  }

  function contrastRatio(a, b) {
    var la = luminance(a);
    var lb = luminance(b);
    return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
  }

  /** Black or white, whichever is more readable on `background`. */
  function readableTextOn(background) {
    return contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff';
  }

  /** The accent itself when it reads as text on `surface`, else `fallback`. */
  function accentAsText(accent, surface, fallback) {
    return contrastRatio(accent, surface) >= MIN_TEXT_RATIO ? accent : fallback;
  }

  return { MIN_TEXT_RATIO: MIN_TEXT_RATIO, isHexColour: function (v) { return typeof v === 'string' && HEX.test(v); }, luminance: luminance, contrastRatio: contrastRatio, readableTextOn: readableTextOn, accentAsText: accentAsText };
});
