package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The lock a launcher takes on its work and run folders before it starts anything. */
class FolderLockTest {

  @TempDir
  Path dir;

  @Test
  void aSecondHolderIsRefusedWithTheFolderAndThePidOfTheFirst() throws Exception {
    String pid = String.valueOf(ProcessHandle.current().pid());
    try (FolderLock first = FolderLock.acquire(dir, "work folder", "--work")) {
      assertThat(Files.readString(dir.resolve(FolderLock.FILE)).trim()).isEqualTo(pid);
      assertThatThrownBy(() -> FolderLock.acquire(dir, "work folder", "--work"))
          .isInstanceOf(IOException.class)
          .hasMessage("another Nodelet (PID " + pid + ") already uses the work folder " + dir.toAbsolutePath()
              + " (it holds " + dir.toAbsolutePath().resolve(FolderLock.FILE) + "): stop it first, or give this one"
              + " another --work");
      // the refusal left the holder's PID in place
      assertThat(Files.readString(dir.resolve(FolderLock.FILE)).trim()).isEqualTo(pid);
    }
    // released: the next one gets it
    try (FolderLock again = FolderLock.acquire(dir, "work folder", "--work")) {
      assertThat(Files.readString(dir.resolve(FolderLock.FILE)).trim()).isEqualTo(pid);
    }
  }

  @Test
  void aStaleFileOfAnEndedProcessDoesNotHoldTheFolder() throws Exception {
    Files.writeString(dir.resolve(FolderLock.FILE), "999999999\n");
    try (FolderLock lock = FolderLock.acquire(dir, "run folder", "--run")) {
      assertThat(Files.readString(dir.resolve(FolderLock.FILE)))
          .isEqualTo(ProcessHandle.current().pid() + "\n");
    }
  }
}
