package dev.nodelet.kube.internal.watch;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a byte stream into UTF-8 lines; a line may span chunks. Holds no buffer between whole lines: a watch
 * idles for minutes, and one large event must not leave its buffer behind.
 */
final class LineSplitter {
  /** The start of a line that spans chunks; null when the last chunk ended with a line break. */
  private ByteArrayOutputStream partial;

  List<String> feed(byte[] bytes) {
    List<String> lines = new ArrayList<>(2);
    int start = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        if (partial == null) {
          lines.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
        } else {
          partial.write(bytes, start, i - start);
          lines.add(partial.toString(StandardCharsets.UTF_8));
          partial = null;
        }
        start = i + 1;
      }
    }
    if (start < bytes.length) {
      if (partial == null) {
        partial = new ByteArrayOutputStream(bytes.length - start);
      }
      partial.write(bytes, start, bytes.length - start);
    }
    return lines;
  }

  /** @return what came after the last line break */
  String rest() {
    return partial == null ? "" : partial.toString(StandardCharsets.UTF_8);
  }
}
