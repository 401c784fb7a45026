package dev.nodelet.persistence.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.EnumSet;
import java.util.Set;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * AES-GCM with a random 96-bit nonce per value; the value's key is the associated data, so a ciphertext moved under
 * another key does not decrypt. Never puts key material or plaintext into an exception message.
 */
public final class AesGcm {

  private static final int NONCE_BYTES = 12;
  private static final int TAG_BITS = 128;
  private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
      PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

  private final SecretKeySpec key;
  private final SecureRandom random = new SecureRandom();

  private AesGcm(byte[] key) {
    this.key = new SecretKeySpec(key, "AES");
  }

  /**
   * Reads a key file: 16, 24 or 32 raw bytes, or their base64 on one line.
   *
   * @throws IllegalArgumentException naming the file and what to do, if it is missing, open to group or others, or
   *     holds no key
   */
  public static AesGcm fromKeyFile(Path file) {
    Set<PosixFilePermission> permissions;
    byte[] content;
    try {
      try {
        permissions = Files.getPosixFilePermissions(file);
      } catch (UnsupportedOperationException e) {
        permissions = OWNER_ONLY; // not a POSIX file system: its own access rules apply
      }
      content = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("persistence key file " + file + " does not exist: create it with "
          + "'head -c 32 /dev/urandom > " + file + " && chmod 600 " + file + "'");
    } catch (IOException e) {
      throw new IllegalArgumentException("persistence key file " + file + " cannot be read: " + e.getMessage());
    }
    if (!OWNER_ONLY.containsAll(permissions)) {
      throw new IllegalArgumentException("persistence key file " + file + " is open to group or others (mode "
          + PosixFilePermissions.toString(permissions) + "): run 'chmod 600 " + file + "'");
    }
    try {
      return new AesGcm(keyBytes(content, file));
    } finally {
      Arrays.fill(content, (byte) 0);
    }
  }

  private static byte[] keyBytes(byte[] content, Path file) {
    if (validLength(content.length)) {
      return content.clone();
    }
    try {
      byte[] decoded = Base64.getDecoder().decode(new String(content, StandardCharsets.US_ASCII).strip());
      if (validLength(decoded.length)) {
        return decoded;
      }
    } catch (IllegalArgumentException e) {
      // not base64 either: the error below says what is expected
    }
    throw new IllegalArgumentException("persistence key file " + file + " holds no AES key: it must hold 16, 24 or "
        + "32 bytes, raw or in base64 (e.g. 'head -c 32 /dev/urandom > " + file + "')");
  }

  private static boolean validLength(int length) {
    return length == 16 || length == 24 || length == 32;
  }

  /** @return nonce followed by ciphertext and tag */
  public byte[] encrypt(byte[] plain, String associated) {
    byte[] nonce = new byte[NONCE_BYTES];
    random.nextBytes(nonce);
    try {
      Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(associated.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = cipher.doFinal(plain);
      return ByteBuffer.allocate(NONCE_BYTES + sealed.length).put(nonce).put(sealed).array();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM is not available in this Java runtime", e);
    }
  }

  /** @throws GeneralSecurityException if the value was sealed with another key or under another name, or damaged */
  public byte[] decrypt(byte[] sealed, String associated) throws GeneralSecurityException {
    if (sealed.length < NONCE_BYTES) {
      throw new GeneralSecurityException("sealed value too short");
    }
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, sealed, 0, NONCE_BYTES));
    cipher.updateAAD(associated.getBytes(StandardCharsets.UTF_8));
    return cipher.doFinal(sealed, NONCE_BYTES, sealed.length - NONCE_BYTES);
  }
}
