package dev.nodelet.launcher;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a folder, held while Nodelet runs: {@code <folder>/nodelet.lock}, locked with
 * {@link FileChannel#tryLock()} (the system drops it when the process ends, however it ends) and holding the PID of
 * its holder. The launcher takes it on its work and run folders before it starts anything, so that a second launcher
 * on the same folders is refused before it writes a kubeconfig or binds a port.
 */
final class FolderLock implements AutoCloseable {

  static final String FILE = "nodelet.lock";

  private final FileChannel channel;
  private final FileLock lock;

  private FolderLock(FileChannel channel, FileLock lock) {
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks {@code folder}, which must exist.
   *
   * @param option the option that chooses the folder, named in the refusal
   * @throws IOException when another Nodelet holds it, naming the folder, the holder's PID when known and what to do
   */
  static FolderLock acquire(Path folder, String what, String option) throws IOException {
    Path file = folder.toAbsolutePath().resolve(FILE);
    // never truncated before the lock is ours: the file holds the holder's PID
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
        StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null; // this JVM holds it already
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      String holder = holder(channel);
      channel.close();
      throw new IOException("another Nodelet" + (holder.isEmpty() ? "" : " (PID " + holder + ")")
          + " already uses the " + what + " " + folder.toAbsolutePath() + " (it holds " + file + "): stop it first,"
          + " or give this one another " + option);
    }
    try {
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      channel.force(false);
    } catch (IOException e) {
      lock.release();
      channel.close();
      throw e;
    }
    return new FolderLock(channel, lock);
  }

  private static String holder(FileChannel channel) {
    try {
      ByteBuffer buffer = ByteBuffer.allocate(32);
      channel.read(buffer, 0);
      String pid = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII).trim();
      return pid.matches("\\d+") ? pid : "";
    } catch (IOException e) {
      return "";
    }
  }

  /** Releases the lock; the file stays (deleting it would let a third launcher lock another file of that name). */
  @Override
  public void close() {
    try {
      lock.release();
      channel.close();
    } catch (IOException e) {
      // the lock goes with the channel, and with the process at the latest
    }
  }
}
