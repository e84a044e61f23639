<?php
// tests/integration/test_real.sh: proves that php-fpm executed PHP (the source
// itself does not contain the reply as one literal).
echo "ben", "ch";
