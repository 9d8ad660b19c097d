import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.headwise.HeadwiseException;
import org.headwise.Translator;

/**
 * The JNI binding on the host JVM: java TranslatorTest MODEL NO_TOKENIZER_MODEL INPUTS EXPECTED.
 * EXPECTED holds headwise-translate's greedy output for the lines of INPUTS (same C API path),
 * so equal lines prove the binding passes text, options and results through unchanged.
 */
public final class TranslatorTest {
  private static int failures = 0;

  private static void check(boolean ok, String what) {
    System.out.println((ok ? "ok: " : "FAIL: ") + what);
    if (!ok) failures++;
  }

  public static void main(String[] args) throws Exception {
    String model = args[0];
    String noTokenizer = args[1];
    List<String> inputs = Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8);
    List<String> expected = Files.readAllLines(Paths.get(args[3]), StandardCharsets.UTF_8);
    check(inputs.size() == expected.size() && inputs.size() >= 3, "inputs and expected lines");

    check(!Translator.version().isEmpty(), "version() = " + Translator.version());
    Translator.Options o = new Translator.Options();
    check(o.maxBatch == 8 && o.maxSourceTokens == 256 && o.maxTargetTokens == 256
              && o.maxBeam == 4 && o.numThreads == 1 && o.maxMemoryBytes == 0,
          "Options defaults are hw_translator_default_params()");
    Translator.Search s = new Translator.Search();
    check(s.beamSize == 1 && s.lengthPenalty == 1.0f && s.maxLength == 0 && !s.splitSentences
              && s.minLength == 0 && !s.sample && s.topK == 0 && s.topP == 1.0f
              && s.temperature == 1.0f && s.seed == 0,
          "Search defaults are hw_search_default_params() (and hw_batch_params')");

    try (Translator t = new Translator(model)) {
      check(t.vocabSize() > 0, "vocabSize() = " + t.vocabSize());
      String[] batch = t.translate(inputs.toArray(new String[0]));
      check(batch.length == inputs.size(), "one translation per input");
      for (int i = 0; i < batch.length; ++i) {
        check(batch[i].equals(expected.get(i)),
              "line " + (i + 1) + " equals headwise-translate: '" + batch[i] + "'");
        String alone = t.translate(inputs.get(i))[0];
        check(alone.equals(batch[i]), "line " + (i + 1) + " alone equals its batch result");
      }
      Translator.Search beam = new Translator.Search();
      beam.beamSize = 2;
      Translator.Result[] r = t.translate(new String[] {inputs.get(0)}, beam);
      check(r.length == 1 && r[0].text != null && Float.isFinite(r[0].score) && r[0].score <= 0f,
            "beam 2: score " + r[0].score);

      // The text path splits batches over maxBatch; results keep input order.
      String[] many = new String[2 * o.maxBatch + 1];
      for (int i = 0; i < many.length; ++i) many[i] = inputs.get(i % inputs.size());
      String[] manyOut = t.translate(many);
      boolean same = manyOut.length == many.length;
      for (int i = 0; same && i < many.length; ++i) same = manyOut[i].equals(batch[i % inputs.size()]);
      check(same, many.length + " lines (over maxBatch) keep their order and translations");

      // splitSentences: a paragraph of two input lines translates as the two lines joined
      // with the space between them (an empty translation is left out with its separator).
      Translator.Search split = new Translator.Search();
      split.splitSentences = true;
      String paragraph = inputs.get(0) + " " + inputs.get(3);
      Translator.Result[] joined = t.translate(new String[] {paragraph}, split);
      String want = batch[0].isEmpty() ? batch[3]
          : batch[3].isEmpty() ? batch[0] : batch[0] + " " + batch[3];
      check(joined.length == 1 && joined[0].text.equals(want),
            "splitSentences joins the sentences' translations: '" + joined[0].text + "'");
      check(!t.translate(paragraph)[0].equals(want) || want.isEmpty(),
            "without splitSentences the paragraph translates whole");
      Translator.Search splitBeam = new Translator.Search();
      splitBeam.splitSentences = true;
      splitBeam.maxLength = 100000;
      try {
        t.translate(new String[] {paragraph}, splitBeam);
        check(false, "splitSentences with a bad search throws");
      } catch (HeadwiseException e) {
        check(e.statusName().equals("INVALID_ARGUMENT"),
              "splitSentences with a bad search throws " + e.getMessage());
      }

      // Target prefixes: blank ones change nothing; a prefix starts the translation.
      String[] two = new String[] {inputs.get(0), inputs.get(1)};
      Translator.Search greedy = new Translator.Search();
      Translator.Result[] blank = t.translate(two, new String[] {"", null}, greedy);
      check(blank[0].text.equals(batch[0]) && blank[1].text.equals(batch[1]),
            "blank target prefixes change nothing");
      Translator.Result[] forced = t.translate(two, new String[] {"ab", null}, greedy);
      check(forced[0].text.startsWith("ab") && forced[1].text.equals(batch[1]),
            "a target prefix starts the translation: '" + forced[0].text + "'");
      try {
        t.translate(two, new String[] {"ab"}, greedy);
        check(false, "one prefix for two texts throws");
      } catch (HeadwiseException e) {
        check(e.statusName().equals("INVALID_ARGUMENT"), "one prefix for two texts throws");
      }

      // Sampling: a seed fixes the translation (alone or in a batch), seeds vary it, a seed
      // above 2^63 passes as its 64 bits; topK 1 is greedy; without sample a setting throws.
      Translator.Search drawn = new Translator.Search();
      drawn.sample = true;
      drawn.temperature = 1.5f;
      drawn.seed = -7L;  // 2^64 - 7
      String[] four = inputs.toArray(new String[0]);
      Translator.Result[] d1 = t.translate(four, drawn);
      Translator.Result[] d2 = t.translate(new String[] {four[3]}, drawn);
      check(d1[3].text.equals(d2[0].text) && d1[3].score == d2[0].score,
            "a sampled line alone equals its batch result: '" + d2[0].text + "'");
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (long seed = 0; seed < 8; ++seed) {
        drawn.seed = seed;
        seen.add(t.translate(new String[] {four[1]}, drawn)[0].text);
      }
      check(seen.size() >= 2, "8 seeds give " + seen.size() + " translations");
      Translator.Search top1 = new Translator.Search();
      top1.sample = true;
      top1.topK = 1;
      top1.seed = 99;
      Translator.Result[] g = t.translate(four, top1);
      boolean greedySame = true;
      for (int i = 0; i < four.length; ++i) greedySame &= g[i].text.equals(batch[i]);
      check(greedySame, "topK 1 is greedy");
      Translator.Search lone = new Translator.Search();
      lone.topP = 0.5f;
      try {
        t.translate(new String[] {four[0]}, lone);
        check(false, "topP without sample throws");
      } catch (HeadwiseException e) {
        check(e.statusName().equals("INVALID_ARGUMENT") && e.getMessage().contains("top_p"),
              "topP without sample throws " + e.getMessage());
      }
      Translator.Search min = new Translator.Search();
      min.minLength = 5;
      Translator.Result[] m = t.translate(new String[] {four[0]}, min);
      check(m.length == 1 && Float.isFinite(m[0].score), "minLength: '" + m[0].text + "'");

      Translator.Search wide = new Translator.Search();
      wide.beamSize = o.maxBeam + 1;
      try {
        t.translate(new String[] {inputs.get(0)}, wide);
        check(false, "a beam over maxBeam throws");
      } catch (HeadwiseException e) {
        check(e.status() != 0, "a beam over maxBeam throws " + e.getMessage());
      }
      t.close();
      t.close();
      try {
        t.translate("Hello.");
        check(false, "translate after close throws");
      } catch (IllegalStateException e) {
        check(true, "translate after close throws IllegalStateException");
      }
    }

    try (Translator t = new Translator(model + ".does-not-exist")) {
      check(false, "a missing model throws");
    } catch (HeadwiseException e) {
      check(e.statusName().equals("IO_ERROR") && e.status() == 20
                && e.getMessage().contains("does-not-exist"),
            "a missing model throws " + e.getMessage());
    }

    try (Translator t = new Translator(noTokenizer)) {
      t.translate("Hello.");
      check(false, "text on a model without tokenizers throws");
    } catch (HeadwiseException e) {
      check(e.status() != 0, "text on a model without tokenizers throws " + e.getMessage());
    }

    Translator.Options bad = new Translator.Options();
    bad.maxBatch = -1;
    try (Translator t = new Translator(model, bad)) {
      check(false, "a negative limit throws");
    } catch (HeadwiseException e) {
      check(e.statusName().equals("INVALID_ARGUMENT"), "a negative limit throws " + e.getMessage());
    }

    System.out.println(failures == 0 ? "all passed" : failures + " failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
