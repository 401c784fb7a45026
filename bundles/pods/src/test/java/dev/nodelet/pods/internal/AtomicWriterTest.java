package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.pods.internal.AtomicWriter.FileContent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kubelet's atomic writer: ..data switched by one rename, visible links, modes, no rewrite when unchanged. */
class AtomicWriterTest {

  @TempDir
  Path dir;

  private static FileContent text(String s, int mode) {
    return new FileContent(s.getBytes(StandardCharsets.UTF_8), mode);
  }

  @Test
  void writesLinksIntoATimestampedFolderAndSwitchesItOnUpdate() throws Exception {
    Path volume = dir.resolve("v");
    assertThat(AtomicWriter.write(volume, Map.of("a", text("1", 0644), "sub/b", text("2", 0600)))).isTrue();
    Path first = volume.resolve(Files.readSymbolicLink(volume.resolve("..data")));
    assertThat(first.getFileName().toString()).matches("\\.\\.\\d{4}_\\d{2}_\\d{2}_\\d{2}_\\d{2}_\\d{2}\\.\\d+");
    assertThat(Files.readSymbolicLink(volume.resolve("a")).toString()).isEqualTo("..data/a");
    assertThat(Files.readString(volume.resolve("sub/b"))).isEqualTo("2");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(volume.resolve("a"))))
        .isEqualTo("rw-r-----");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(volume.resolve("sub/b"))))
        .isEqualTo("rw-------");

    assertThat(AtomicWriter.write(volume, Map.of("a", text("1", 0644), "sub/b", text("2", 0600)))).isFalse();
    assertThat(volume.resolve(Files.readSymbolicLink(volume.resolve("..data")))).isEqualTo(first);

    assertThat(AtomicWriter.write(volume, Map.of("a", text("3", 0644)))).isTrue();
    assertThat(Files.readString(volume.resolve("a"))).isEqualTo("3");
    assertThat(Files.exists(volume.resolve("sub"))).isFalse();
    assertThat(first).doesNotExist();
    try (Stream<Path> entries = Files.list(volume)) {
      assertThat(entries.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("..")))
          .hasSize(2).contains("..data");
    }
  }

  @Test
  void pathsThatLeaveTheFolderAreRefused() {
    assertThatThrownBy(() -> AtomicWriter.write(dir.resolve("v"), Map.of("../x", text("1", 0644))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be relative");
    assertThatThrownBy(() -> AtomicWriter.write(dir.resolve("v"), Map.of("/etc/x", text("1", 0644))))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
