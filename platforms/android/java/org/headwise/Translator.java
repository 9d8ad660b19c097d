package org.headwise;

import java.nio.charset.StandardCharsets;

/**
 * A loaded model and one translator over the headwise C API (headwise.h), for Android apps and
 * any JVM. Text crosses the boundary as UTF-8 bytes (not JNI's modified UTF-8), so characters
 * outside the BMP arrive intact.
 *
 * <pre>
 *   try (Translator t = new Translator("/data/.../model.hwm")) {
 *     String[] out = t.translate("Open the file.", "Close the window.");
 *   }
 * </pre>
 *
 * Threads: one call at a time per Translator (the methods are synchronized); use one
 * Translator per thread for parallel work. close() frees the native objects; calls after it
 * throw IllegalStateException. Failures throw HeadwiseException with the C status.
 */
public final class Translator implements AutoCloseable {
  static {
    System.loadLibrary("headwise_jni");
  }

  /** Translator limits; the defaults are hw_translator_default_params(). */
  public static final class Options {
    public int maxBatch;
    public int maxSourceTokens;
    public int maxTargetTokens;
    public int maxBeam;
    public int numThreads;
    public long maxMemoryBytes;

    public Options() {
      long[] d = nativeTranslatorDefaults();
      maxBatch = (int) d[0];
      maxSourceTokens = (int) d[1];
      maxTargetTokens = (int) d[2];
      maxBeam = (int) d[3];
      numThreads = (int) d[4];
      maxMemoryBytes = d[5];
    }
  }

  /** Search settings; the defaults are hw_search_default_params() (greedy). */
  public static final class Search {
    public int beamSize;
    public float lengthPenalty;
    public int maxLength;
    /**
     * Cut each text into sentences (the rule that cut the model's training text), translate
     * each on its own and join the translations with the whitespace between them: paragraphs
     * translate as the model was trained (hw_batch_params.split_sentences).
     */
    public boolean splitSentences;
    /** EOS is not chosen before this many generated tokens; 0 = off (hw_search_params). */
    public int minLength;
    /**
     * Draw each token at random instead of taking the best (beamSize 1 only), shaped by topK
     * (0 = every piece), topP (the nucleus, in (0, 1]; 1 = off) and temperature (> 0). The seed
     * and a text's pieces fix its draws: the same seed gives the same translation (a "try
     * another" button changes the seed). topK, topP, temperature and seed must keep their
     * defaults without sample (the call throws INVALID_ARGUMENT).
     */
    public boolean sample;
    public int topK;
    public float topP;
    public float temperature;
    /** Any long: its 64 bits are the unsigned seed of hw_search_params. */
    public long seed;

    public Search() {
      float[] d = nativeSearchDefaults();
      beamSize = (int) d[0];
      lengthPenalty = d[1];
      maxLength = (int) d[2];
      splitSentences = d[3] != 0f;
      minLength = (int) d[4];
      sample = d[5] != 0f;
      topK = (int) d[6];
      topP = d[7];
      temperature = d[8];
      seed = nativeSearchDefaultSeed();
    }
  }

  /** The best hypothesis of one input line. */
  public static final class Result {
    public final String text;
    public final float score;

    Result(String text, float score) {
      this.text = text;
      this.score = score;
    }
  }

  private long handle;

  public Translator(String modelPath) throws HeadwiseException {
    this(modelPath, new Options());
  }

  public Translator(String modelPath, Options options) throws HeadwiseException {
    long[] limits = {options.maxBatch, options.maxSourceTokens, options.maxTargetTokens,
                     options.maxBeam, options.numThreads, options.maxMemoryBytes};
    handle = nativeOpen(modelPath.getBytes(StandardCharsets.UTF_8), limits);
  }

  /** The runtime's version string (hw_version). */
  public static native String version();

  /** Target vocabulary size of the loaded model. */
  public synchronized int vocabSize() {
    return nativeVocabSize(checkOpen());
  }

  /** Greedy translations of texts, in order. */
  public String[] translate(String... texts) throws HeadwiseException {
    Result[] results = translate(texts, new Search());
    String[] out = new String[results.length];
    for (int i = 0; i < results.length; ++i) out[i] = results[i].text;
    return out;
  }

  /**
   * Translations of texts with the given search, in order. More than Options.maxBatch texts
   * are split into batches by the runtime; one failing line fails the call (hw_translate).
   */
  public synchronized Result[] translate(String[] texts, Search search) throws HeadwiseException {
    return translate(texts, null, search);
  }

  /**
   * Translations of texts, each forced to begin with its entry of targetPrefixes (one per text;
   * null or blank: none; null array: no prefixes), with the given search, in order
   * (hw_translate_each_prefixed; include/headwise/headwise.hpp, "Target prefix"). One failing
   * line fails the call, naming it. Not with Search.splitSentences.
   */
  public synchronized Result[] translate(String[] texts, String[] targetPrefixes, Search search)
      throws HeadwiseException {
    long h = checkOpen();
    byte[][] utf8 = new byte[texts.length][];
    for (int i = 0; i < texts.length; ++i) utf8[i] = texts[i].getBytes(StandardCharsets.UTF_8);
    byte[][] prefixes = null;
    if (targetPrefixes != null) {
      prefixes = new byte[targetPrefixes.length][];
      for (int i = 0; i < targetPrefixes.length; ++i) {
        String p = targetPrefixes[i] == null ? "" : targetPrefixes[i];
        prefixes[i] = p.getBytes(StandardCharsets.UTF_8);
      }
    }
    float[] scores = new float[texts.length];
    byte[][] out = nativeTranslate(h, utf8, prefixes, search.beamSize, search.lengthPenalty,
                                   search.maxLength, search.splitSentences, search.minLength,
                                   search.sample, search.topK, search.topP, search.temperature,
                                   search.seed, scores);
    Result[] results = new Result[out.length];
    for (int i = 0; i < out.length; ++i) {
      results[i] = new Result(new String(out[i], StandardCharsets.UTF_8), scores[i]);
    }
    return results;
  }

  @Override
  public synchronized void close() {
    if (handle != 0) {
      nativeClose(handle);
      handle = 0;
    }
  }

  private long checkOpen() {
    if (handle == 0) throw new IllegalStateException("headwise Translator is closed");
    return handle;
  }

  private static native long[] nativeTranslatorDefaults();
  private static native float[] nativeSearchDefaults();
  private static native long nativeSearchDefaultSeed();
  private static native long nativeOpen(byte[] pathUtf8, long[] limits) throws HeadwiseException;
  private static native int nativeVocabSize(long handle);
  private static native byte[][] nativeTranslate(long handle, byte[][] textsUtf8,
                                                 byte[][] prefixesUtf8, int beamSize,
      float lengthPenalty, int maxLength, boolean splitSentences, int minLength, boolean sample,
      int topK, float topP, float temperature, long seed, float[] scoresOut)
      throws HeadwiseException;
  private static native void nativeClose(long handle);
}
