package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SocketFilesTest {

  @TempDir
  Path temp;

  @Test
  void aFolderMustBeADirectoryOfMode0700OrStricter() throws Exception {
    Path folder = Files.createDirectory(temp.resolve("registry"));
    Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwxr-x---"));
    assertThat(SocketFiles.folderProblem(folder, SocketFiles.mode(folder))).isEqualTo("registration folder "
        + folder + " has mode 0750; it must be 0700 (no access for group or others), so no driver registers from it"
        + " until that is fixed");
    Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwx------"));
    assertThat(SocketFiles.folderProblem(folder, SocketFiles.mode(folder))).isNull();
    Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("r-x------"));
    assertThat(SocketFiles.folderProblem(folder, SocketFiles.mode(folder))).isNull();
    assertThat(SocketFiles.folderProblem(temp.resolve("missing"), SocketFiles.mode(temp.resolve("missing"))))
        .startsWith("registration folder " + temp.resolve("missing") + " does not exist: create it with mode 0700");
  }

  @Test
  void aSocketMustBeAUnixSocketOfMode0600OrStricter() throws Exception {
    Path file = Files.createFile(temp.resolve("plain"));
    assertThat(SocketFiles.socketProblem("endpoint", file, SocketFiles.mode(file)))
        .isEqualTo("endpoint " + file + " is not a unix socket");
    Path link = Files.createSymbolicLink(temp.resolve("link"), file);
    assertThat(SocketFiles.socketProblem("endpoint", link, SocketFiles.mode(link)))
        .isEqualTo("endpoint " + link + " is not a unix socket");
  }
}
