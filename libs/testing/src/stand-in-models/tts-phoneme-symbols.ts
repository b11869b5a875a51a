/** IPA symbols espeak-ng writes for English (with stress marks and length), used by both TTS stand-ins. */
export const IPA_SYMBOLS = [...'ɑɐɒæβɔɕçɖðʤəɚɛɜɟɡɥɨɪʝɯɰŋɳɲɴøɸθœɹɾɻʁɽʂʃʈʧʊʋʌɣɤχʎʒʔˈˌːʰʲ↓→↗↘ᵻ'];
