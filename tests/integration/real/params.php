<?php
// tests/integration/test_real.sh: echoes what hopbench's FastCGI params carried:
// the query string (--query), an extra param (--param HB_TAG=...) and DOCUMENT_ROOT (--docroot).
echo $_GET['a'] ?? '-', ':', $_SERVER['HB_TAG'] ?? '-', ':', $_SERVER['DOCUMENT_ROOT'] ?? '-';
