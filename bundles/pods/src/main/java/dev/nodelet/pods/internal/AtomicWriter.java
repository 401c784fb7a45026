package dev.nodelet.pods.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The kubelet's atomic writer ({@code volume/util/atomic_writer.go}) for one volume folder: every visible path is a
 * symlink into {@code ..data/}; {@code ..data} is a symlink to a timestamped folder. An update writes a new
 * timestamped folder, points {@code ..data_tmp} at it and renames that over {@code ..data} in one step, then
 * removes the old folder, so a reader sees the old set of files or the new one, never a mix. An unchanged payload
 * writes nothing. File modes lose the bits for other users: the folder belongs to the node alone.
 */
final class AtomicWriter {

  static final String DATA = "..data";
  private static final String DATA_TMP = "..data_tmp";
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy_MM_dd_HH_mm_ss");

  /**
   * One file of a volume.
   *
   * @param content its bytes
   * @param mode its permission bits (as {@code defaultMode} or an item's {@code mode}); other users' bits are dropped
   */
  record FileContent(byte[] content, int mode) {
    FileContent {
      mode = effectiveMode(mode);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof FileContent f && f.mode == mode && Arrays.equals(f.content, content);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(content) * 31 + mode;
    }

    @Override
    public String toString() {
      return "FileContent[" + content.length + " bytes, mode " + Integer.toOctalString(mode) + "]";
    }
  }

  private AtomicWriter() {
  }

  /**
   * Writes a payload into a volume folder.
   *
   * @param dir the volume folder (created if missing)
   * @param payload relative path (no {@code ..}, not absolute) to content
   * @return true if something changed
   * @throws IOException if writing fails; the previous content stays visible
   * @throws IllegalArgumentException for a path that leaves the folder or starts with {@code ..}
   */
  static boolean write(Path dir, Map<String, FileContent> payload) throws IOException {
    for (String path : payload.keySet()) {
      Path relative = Path.of(path).normalize();
      if (path.isEmpty() || relative.isAbsolute() || relative.startsWith("..") || path.startsWith("..")) {
        throw new IllegalArgumentException("volume path " + path + " must be relative and must not start with '..'");
      }
    }
    Files.createDirectories(dir);
    Path data = dir.resolve(DATA);
    if (Files.isSymbolicLink(data) && payload.equals(read(dir.resolve(Files.readSymbolicLink(data))))) {
      return false;
    }
    Path old = Files.isSymbolicLink(data) ? dir.resolve(Files.readSymbolicLink(data)) : null;
    String stamp = ".." + LocalDateTime.now(ZoneOffset.UTC).format(STAMP) + "." + System.nanoTime();
    Path next = Files.createDirectory(dir.resolve(stamp), PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxr-x---")));
    for (Map.Entry<String, FileContent> file : payload.entrySet()) {
      Path target = next.resolve(file.getKey());
      Files.createDirectories(target.getParent());
      Files.write(target, file.getValue().content());
      Files.setPosixFilePermissions(target, permissions(file.getValue().mode()));
    }
    Path tmp = dir.resolve(DATA_TMP);
    Files.deleteIfExists(tmp);
    Files.createSymbolicLink(tmp, Path.of(stamp));
    Files.move(tmp, data, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    Set<String> visible = new HashSet<>();
    for (String path : payload.keySet()) {
      visible.add(Path.of(path).normalize().getName(0).toString());
    }
    for (String name : visible) {
      Path link = dir.resolve(name);
      try {
        Files.createSymbolicLink(link, Path.of(DATA, name));
      } catch (FileAlreadyExistsException e) {
        // already a link into ..data
      }
    }
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        String name = entry.getFileName().toString();
        if (!name.startsWith("..") && !visible.contains(name) && Files.isSymbolicLink(entry)) {
          Files.delete(entry);
        }
      }
    }
    if (old != null && !old.equals(next)) {
      deleteTree(old);
    }
    return true;
  }

  /** @return the payload a timestamped folder holds */
  static Map<String, FileContent> read(Path folder) throws IOException {
    if (!Files.isDirectory(folder)) {
      return Map.of();
    }
    Map<String, FileContent> files = new java.util.HashMap<>();
    try (Stream<Path> walk = Files.walk(folder)) {
      for (Path file : (Iterable<Path>) walk::iterator) {
        if (Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
          files.put(folder.relativize(file).toString(), new FileContent(Files.readAllBytes(file),
              mode(Files.getPosixFilePermissions(file))));
        }
      }
    }
    return files;
  }

  /** Removes a folder and everything in it; nothing if it is missing. */
  static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    }
  }

  /** @return the mode a file gets: the given one without the bits for other users */
  static int effectiveMode(int mode) {
    return mode & 0770;
  }

  private static Set<PosixFilePermission> permissions(int mode) {
    int m = effectiveMode(mode);
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    PosixFilePermission[] order = {PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
        PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
        PosixFilePermission.OTHERS_EXECUTE};
    for (int i = 0; i < 9; i++) {
      if ((m & (0400 >> i)) != 0) {
        set.add(order[i]);
      }
    }
    return set;
  }

  private static int mode(Set<PosixFilePermission> permissions) {
    int m = 0;
    for (PosixFilePermission p : permissions) {
      m |= 0400 >> p.ordinal();
    }
    return m;
  }
}
