package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.PreparedDevice;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One claim in the claim manager's cache and checkpoint: the pods of this node that use it and the devices each
 * driver prepared. Touched by the claim manager's thread only.
 */
public final class ClaimEntry {

  public final String namespace;
  public final String name;
  public final String uid;
  public final Set<String> podUids = new TreeSet<>();
  /** Devices per driver; a driver of the allocation that has not prepared yet has an empty list. */
  public final Map<String, List<PreparedDevice>> drivers = new TreeMap<>();
  /** Every driver prepared the claim. Kept in the checkpoint, so a restart prepares nothing twice. */
  public boolean prepared;
  /** The last pod is gone: new pods are refused until the drivers unprepared it. Memory only. */
  public boolean unpreparing;

  public ClaimEntry(String namespace, String name, String uid) {
    this.namespace = namespace;
    this.name = name;
    this.uid = uid;
  }

  public String key() {
    return namespace + "/" + name;
  }

  public ClaimRef ref() {
    return new ClaimRef(namespace, name, uid);
  }
}
