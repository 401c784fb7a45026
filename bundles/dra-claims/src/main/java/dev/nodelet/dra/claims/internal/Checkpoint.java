package dev.nodelet.dra.claims.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.dra.PreparedDevice;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.zip.CRC32;

/**
 * The claim cache on disk, in the kubelet's {@code dra_manager_state} format:
 * {@code {"Data":"<json>","Checksum":<CRC-32 of Data>}} with Data =
 * {@code {"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":[...]}}.
 * Each write replaces the whole file atomically (a temporary file in the same folder, forced to disk, then
 * renamed). A {@code null} list or map of an entry is written back as {@code null} while the entry keeps it empty.
 */
public final class Checkpoint {

  public static final String FILE_NAME = "dra_manager_state";
  private static final String KIND = "DRACheckpoint";
  private static final String API_VERSION = "checkpoint.dra.kubelet.k8s.io/v1";
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Per driver state: the node operations its devices skip (DRAOptionalNodeOperations). */
  private static final String SKIP = "SkipNodeOperations";

  /** The file could not be used; it has been moved aside to {@link #movedTo}. */
  public static final class CorruptException extends Exception {
    private static final long serialVersionUID = 1L;
    public final transient Path movedTo;

    CorruptException(String message, Path movedTo) {
      super(message);
      this.movedTo = movedTo;
    }
  }

  private final Path file;
  private final Clock clock;

  public Checkpoint(Path folder, Clock clock) {
    this.file = folder.resolve(FILE_NAME);
    this.clock = clock;
  }

  public Path file() {
    return file;
  }

  /**
   * Reads the entries; a missing file is an empty cache.
   *
   * @throws CorruptException if the file is not a valid checkpoint; it is moved aside first
   * @throws IOException if the file cannot be read or moved
   */
  public List<ClaimEntry> read() throws IOException, CorruptException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return List.of();
    }
    String problem;
    try {
      JsonNode outer = JSON.readTree(bytes);
      JsonNode data = outer == null ? null : outer.get("Data");
      JsonNode checksum = outer == null ? null : outer.get("Checksum");
      if (data == null || !data.isTextual() || checksum == null || !checksum.canConvertToLong()) {
        problem = "it has no Data string and Checksum number";
      } else if (crc(data.asText()) != checksum.asLong()) {
        problem = "its checksum does not match its data";
      } else {
        return entries(JSON.readTree(data.asText()));
      }
    } catch (JsonProcessingException e) {
      problem = "it is not a DRA checkpoint: " + e.getOriginalMessage();
    } catch (IllegalArgumentException e) {
      problem = "it is not a DRA checkpoint: " + e.getMessage();
    }
    Path aside = file.resolveSibling(FILE_NAME + ".corrupt-" + clock.millis());
    Files.move(file, aside, StandardCopyOption.REPLACE_EXISTING);
    throw new CorruptException("checkpoint " + file + " is unusable (" + problem + "); it was moved to " + aside
        + " and the claims are rebuilt from the API server", aside);
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    if (value == null || !value.isTextual()) {
      throw new IllegalArgumentException("an entry has no " + field);
    }
    return value.asText();
  }

  private static List<ClaimEntry> entries(JsonNode data) {
    if (!KIND.equals(data.path("kind").asText()) || !API_VERSION.equals(data.path("apiVersion").asText())) {
      throw new IllegalArgumentException("kind/apiVersion is not " + KIND + "/" + API_VERSION);
    }
    List<ClaimEntry> entries = new ArrayList<>();
    for (JsonNode e : data.path("ClaimInfoStateList")) {
      ClaimEntry entry = new ClaimEntry(text(e, "Namespace"), text(e, "ClaimName"), text(e, "ClaimUID"));
      nullAt(e, "PodUIDs", "PodUIDs", entry);
      e.path("PodUIDs").fieldNames().forEachRemaining(entry.podUids::add);
      nullAt(e, "DriverState", "DriverState", entry);
      e.path("DriverState").fields().forEachRemaining(d -> {
        String at = "DriverState/" + d.getKey() + "/";
        List<String> skipped = strings(d.getValue().get(SKIP));
        if (!skipped.isEmpty()) {
          entry.skips.put(d.getKey(), new java.util.TreeSet<>(skipped));
        }
        nullAt(d.getValue(), "Devices", at + "Devices", entry);
        List<PreparedDevice> devices = new ArrayList<>();
        int i = 0;
        for (JsonNode dev : d.getValue().path("Devices")) {
          nullAt(dev, "RequestNames", at + i + "/RequestNames", entry);
          nullAt(dev, "CDIDeviceIDs", at + i + "/CDIDeviceIDs", entry);
          devices.add(new PreparedDevice(strings(dev.get("RequestNames")), text(dev, "PoolName"),
              text(dev, "DeviceName"), strings(dev.get("CDIDeviceIDs")),
              dev.hasNonNull("ShareID") ? dev.get("ShareID").asText() : null));
          i++;
        }
        entry.drivers.put(d.getKey(), devices);
      });
      entries.add(entry);
    }
    return entries;
  }

  private static void nullAt(JsonNode parent, String field, String path, ClaimEntry entry) {
    if (parent.has(field) && parent.get(field).isNull()) {
      entry.nulls.add(path);
    }
  }

  /** An empty list read as {@code null} stays {@code null}. */
  private static void strings(ObjectNode parent, String field, List<String> values, boolean wasNull) {
    if (values.isEmpty() && wasNull) {
      parent.putNull(field);
    } else {
      values.forEach(parent.putArray(field)::add);
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    if (array != null) {
      array.forEach(s -> out.add(s.asText()));
    }
    return out;
  }

  /** Replaces the file with these entries, atomically. */
  public void write(Collection<ClaimEntry> entries) throws IOException {
    store(encode(entries));
  }

  /** The file's bytes for these entries; taken on the claim manager's thread, stored later by {@link #store}. */
  public byte[] encode(Collection<ClaimEntry> entries) throws JsonProcessingException {
    ObjectNode data = JSON.createObjectNode();
    data.put("kind", KIND);
    data.put("apiVersion", API_VERSION);
    ArrayNode list = data.putArray("ClaimInfoStateList");
    for (ClaimEntry entry : entries) {
      ObjectNode e = list.addObject();
      e.put("ClaimUID", entry.uid);
      e.put("ClaimName", entry.name);
      e.put("Namespace", entry.namespace);
      if (entry.podUids.isEmpty() && entry.nulls.contains("PodUIDs")) {
        e.putNull("PodUIDs");
      } else {
        ObjectNode pods = e.putObject("PodUIDs");
        entry.podUids.forEach(pods::putObject);
      }
      if (entry.drivers.isEmpty() && entry.nulls.contains("DriverState")) {
        e.putNull("DriverState");
        continue;
      }
      ObjectNode drivers = e.putObject("DriverState");
      entry.drivers.forEach((driver, devices) -> {
        String at = "DriverState/" + driver + "/";
        ObjectNode state = drivers.putObject(driver);
        java.util.Set<String> skipped = entry.skips.getOrDefault(driver, java.util.Set.of());
        if (!skipped.isEmpty()) { // only then, so that other entries stay as the kubelet writes them
          skipped.forEach(state.putArray(SKIP)::add);
        }
        if (devices.isEmpty() && entry.nulls.contains(at + "Devices")) {
          state.putNull("Devices");
          return;
        }
        ArrayNode array = state.putArray("Devices");
        for (int i = 0; i < devices.size(); i++) {
          PreparedDevice d = devices.get(i);
          ObjectNode dev = array.addObject();
          dev.put("PoolName", d.poolName());
          dev.put("DeviceName", d.deviceName());
          if (d.shareId() == null) {
            dev.putNull("ShareID");
          } else {
            dev.put("ShareID", d.shareId());
          }
          strings(dev, "RequestNames", d.requestNames(), entry.nulls.contains(at + i + "/RequestNames"));
          strings(dev, "CDIDeviceIDs", d.cdiDeviceIds(), entry.nulls.contains(at + i + "/CDIDeviceIDs"));
        }
      });
    }
    String text = JSON.writeValueAsString(data);
    ObjectNode outer = JSON.createObjectNode();
    outer.put("Data", text);
    outer.put("Checksum", crc(text));
    return JSON.writeValueAsBytes(outer);
  }

  /** Replaces the file with these bytes atomically, forced to disk before the rename. */
  public void store(byte[] bytes) throws IOException {
    Files.createDirectories(file.getParent());
    Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
    try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
      out.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static long crc(String data) {
    CRC32 crc = new CRC32();
    crc.update(data.getBytes(StandardCharsets.UTF_8));
    return crc.getValue();
  }
}
