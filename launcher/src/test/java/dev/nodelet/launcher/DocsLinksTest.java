package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link in README.md and docs/ resolves: the file exists, and an anchor names a heading of the
 * Markdown file it points to (GitHub's heading ids).
 */
class DocsLinksTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
  private static final Pattern FENCE = Pattern.compile("(?ms)^```.*?^```");

  private static List<Path> documents() throws IOException {
    List<Path> documents = new ArrayList<>();
    documents.add(ROOT.resolve("README.md"));
    try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(documents::add);
    }
    return documents;
  }

  /** The ids GitHub gives the headings of a Markdown file. */
  static Set<String> anchors(Path markdown) {
    Set<String> anchors = new HashSet<>();
    try {
      for (String line : FENCE.matcher(Files.readString(markdown)).replaceAll("").split("\n")) {
        if (line.startsWith("#")) {
          String heading = line.replaceFirst("^#+\\s*", "").trim().toLowerCase(Locale.ROOT);
          anchors.add(heading.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return anchors;
  }

  @Test
  void everyRelativeLinkInReadmeAndDocsResolves() throws IOException {
    List<Path> documents = documents();
    assertThat(documents).hasSizeGreaterThan(5);
    List<String> broken = new ArrayList<>();
    int checked = 0;
    for (Path document : documents) {
      Matcher links = LINK.matcher(FENCE.matcher(Files.readString(document)).replaceAll(""));
      while (links.find()) {
        String target = links.group(1);
        if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
          continue; // http:, https:, mailto: are not checked here
        }
        checked++;
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? document : document.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(ROOT.relativize(document) + ": " + target + " (no file " + ROOT.relativize(resolved) + ")");
        } else if (hash >= 0 && resolved.toString().endsWith(".md")
            && !anchors(resolved).contains(target.substring(hash + 1))) {
          broken.add(ROOT.relativize(document) + ": " + target + " (no such heading)");
        }
      }
    }
    assertThat(checked).as("relative links checked").isGreaterThan(10);
    assertThat(broken).as("broken links").isEmpty();
  }
}
